import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createStoreActivities } from '../../activities/store/activities.js';
import { machineBlock, recordRental } from '../helpers/store-rentals.js';

const machine = machineBlock(710_000_000);
let pool: pg.Pool;
let store: ReturnType<typeof createStoreActivities>;

beforeAll(() => {
  pool = new pg.Pool({ connectionString: inject('databaseUrl'), max: 4 });
  store = createStoreActivities({ pool });
});
afterAll(async () => pool.end());

const rental = (machineId: number) => recordRental(store, machineId, { keyPrefix: 'rep', stage: 'benchmark' });

const killed = (
  failureType: 'HostLost' | 'DaemonOOM' | 'CancelledByOperator',
  machineId: number,
  transientMarkSec?: number,
) => ({
  outcome: 'killed' as const,
  failureType,
  reason: 'test',
  machineId,
  destroyed: true,
  ...(transientMarkSec !== undefined ? { transientMarkSec } : {}),
});

const verdict = async (rentalKey: string) =>
  (await pool.query<{ verdict: string }>('SELECT verdict FROM instances WHERE rental_key = $1', [rentalKey])).rows[0]
    ?.verdict;

describe('reputation in the store', () => {
  it('records the three verdicts apart', async () => {
    const m = machine + 1;
    const a = await rental(m);
    await store.recordOutcome({ ...a, ...killed('HostLost', m) });
    const b = await rental(m);
    await store.recordOutcome({ ...b, ...killed('DaemonOOM', m) });
    const c = await rental(m + 5);
    await store.recordOutcome({
      ...c,
      outcome: 'promoted',
      failureType: null,
      reason: '40 proofs/h',
      machineId: m + 5,
      destroyed: false,
    });
    expect([await verdict(a.rentalKey), await verdict(b.rentalKey), await verdict(c.rentalKey)]).toEqual([
      'inconclusive',
      'kill',
      'promote',
    ]);
  });

  it('a transient mark expires into probation, and a promotion clears it', async () => {
    const m = machine + 2;
    await store.recordOutcome({ ...(await rental(m)), ...killed('HostLost', m, 1) });
    expect(await store.machineStanding({ machineId: m })).toMatchObject({ standing: 'good' });
    expect(await store.recordOutcome({ ...(await rental(m)), ...killed('HostLost', m, 1) })).toEqual({
      markedBad: true,
    });
    expect(await store.machineStanding({ machineId: m })).toMatchObject({ standing: 'bad' });
    expect(await store.listBadMachines()).toContain(m);
    await new Promise((r) => setTimeout(r, 1200));
    expect(await store.listBadMachines()).not.toContain(m);
    expect(await store.machineStanding({ machineId: m })).toMatchObject({ standing: 'probation' });
    const pass = await rental(m);
    expect(
      await store.recordOutcome({
        ...pass,
        outcome: 'promoted',
        failureType: null,
        reason: '40 proofs/h',
        machineId: m,
        destroyed: false,
      }),
    ).toEqual({ markedBad: false, passedProbation: true });
    expect(await store.machineStanding({ machineId: m })).toMatchObject({ standing: 'good' });
    // Its counts start again: one more transient is not a second strike.
    expect(await store.recordOutcome({ ...(await rental(m)), ...killed('HostLost', m, 1) })).toEqual({
      markedBad: false,
    });
  });

  it('a kill’s mark expires, and is never shortened by a later shorter one', async () => {
    const m = machine + 3;
    await store.recordOutcome({ ...(await rental(m)), ...killed('DaemonOOM', m) });
    await store.recordOutcome({ ...(await rental(m)), ...killed('HostLost', m, 1) });
    await store.recordOutcome({ ...(await rental(m)), ...killed('HostLost', m, 1) });
    const row = await pool.query<{ days: number; reason: string }>(
      `SELECT extract(epoch FROM expires_at - now()) / 86400 AS days, reason FROM bad_machines WHERE machine_id = $1`,
      [m],
    );
    // A first kill marks for a week (KILL_MARK_SEC), not for good.
    expect(row.rows[0]?.reason).toBe('DaemonOOM x1: test');
    expect(Number(row.rows[0]?.days)).toBeGreaterThan(6.9);
    expect(Number(row.rows[0]?.days)).toBeLessThanOrEqual(7);
    await new Promise((r) => setTimeout(r, 1200));
    expect(await store.machineStanding({ machineId: m })).toMatchObject({ standing: 'bad' });
  });

  it('a kill judged on an operator’s per-deploy bar neither counts nor marks', async () => {
    const m = machine + 7;
    const r = await rental(m);
    const res = await store.recordOutcome({
      ...r,
      outcome: 'killed',
      failureType: 'BenchRateBelowMin',
      reason: '29 proofs/h is below the minimum of 2900',
      machineId: m,
      destroyed: true,
      operatorBar: true,
    });
    expect(res).toEqual({ markedBad: false });
    expect((await pool.query('SELECT 1 FROM bad_machines WHERE machine_id = $1', [m])).rowCount).toBe(0);
    expect((await pool.query('SELECT 1 FROM machine_failures WHERE machine_id = $1', [m])).rowCount).toBe(0);
    expect(await verdict(r.rentalKey)).toBe('kill');
  });

  it('never counts an inconclusive of ours', async () => {
    const m = machine + 4;
    for (let i = 0; i < 3; i++)
      await store.recordOutcome({ ...(await rental(m)), ...killed('CancelledByOperator', m) });
    expect(await store.machineStanding({ machineId: m })).toMatchObject({ standing: 'good' });
  });
});

describe('bounded retries', () => {
  it('lets a machine rest after more inconclusive verdicts than retries, or after one of ours', async () => {
    const once = machine + 6;
    const twice = machine + 7;
    const cancelled = machine + 8;
    await store.recordOutcome({ ...(await rental(once)), ...killed('HostLost', once) });
    await store.recordOutcome({ ...(await rental(twice)), ...killed('HostLost', twice) });
    await store.recordOutcome({ ...(await rental(twice)), ...killed('HostLost', twice) });
    await store.recordOutcome({ ...(await rental(cancelled)), ...killed('CancelledByOperator', cancelled) });
    const resting = await store.restingMachines({ windowSec: 3600, retries: 1 });
    expect(resting).not.toContain(once);
    expect(resting).toContain(twice);
    expect(resting).toContain(cancelled);
    // Verdicts older than the window are forgotten.
    await pool.query(`UPDATE instances SET updated_at = now() - interval '2 hours' WHERE machine_id = $1`, [twice]);
    expect(await store.restingMachines({ windowSec: 3600, retries: 1 })).not.toContain(twice);
  });
});
