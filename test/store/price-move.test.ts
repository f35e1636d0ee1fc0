import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createStoreActivities } from '../../activities/store/activities.js';
import { machineBlock, recordRental } from '../helpers/store-rentals.js';

const machine = machineBlock(720_000_000);
let pool: pg.Pool;
let store: ReturnType<typeof createStoreActivities>;

beforeAll(() => {
  pool = new pg.Pool({ connectionString: inject('databaseUrl'), max: 2 });
  store = createStoreActivities({ pool });
});
afterAll(async () => pool?.end());

const T0 = Date.parse('2026-12-05T08:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

/** Rented at $0.6/h with a $0.4/h bid at T0. */
const promotedRental = (machineId: number) =>
  recordRental(store, machineId, {
    dphTotal: 0.6,
    bidDph: 0.4,
    rentedAt: iso(T0),
    instanceId: machineId,
  });

async function row(rentalKey: string) {
  const r = await pool.query<{
    dph_total: number;
    bid_dph: number | null;
    cost_before_verdict_usd: number | null;
    cost_production_usd: number | null;
    cost_counted_at: Date | null;
  }>(
    `SELECT dph_total, bid_dph, cost_before_verdict_usd, cost_production_usd, cost_counted_at
     FROM instances WHERE rental_key = $1`,
    [rentalKey],
  );
  return r.rows[0];
}

describe('a watched rental whose billed price moved', () => {
  it('records the new price and bid with the cost counted to the move; an older (retried) move never wins', async () => {
    const ids = await promotedRental(machine);
    const move = { dphTotal: 0.75, bidDph: 0.55, beforeVerdictUsd: 0.6, productionUsd: 0.3 };
    expect(await store.recordPriceMove({ ...ids, ...move, countedAt: iso(T0 + 2 * 3_600_000) })).toBe(true);
    // The same write again (Temporal may run it twice) changes nothing.
    expect(await store.recordPriceMove({ ...ids, ...move, countedAt: iso(T0 + 2 * 3_600_000) })).toBe(true);
    // A write from before that move, arriving late, is refused.
    const stale = { dphTotal: 0.7, bidDph: 0.5, beforeVerdictUsd: 0.6, productionUsd: 0.1 };
    expect(await store.recordPriceMove({ ...ids, ...stale, countedAt: iso(T0 + 3_600_000) })).toBe(false);
    expect(await row(ids.rentalKey)).toMatchObject({
      dph_total: 0.75,
      bid_dph: 0.55,
      cost_before_verdict_usd: 0.6,
      cost_production_usd: 0.3,
      cost_counted_at: new Date(T0 + 2 * 3_600_000),
    });
  });

  it('an on-demand move keeps the recorded bid column; a killed rental keeps the figures its outcome wrote', async () => {
    const ids = await promotedRental(machine + 1);
    const base = { beforeVerdictUsd: 0.6, productionUsd: 0.2, countedAt: iso(T0 + 3_600_000) };
    expect(await store.recordPriceMove({ ...ids, ...base, dphTotal: 0.8, bidDph: null })).toBe(true);
    expect((await row(ids.rentalKey))?.bid_dph).toBe(0.4);
    await store.recordOutcome({
      ...ids,
      outcome: 'killed',
      failureType: 'RateDegraded',
      reason: 'test',
      machineId: machine + 1,
      destroyed: true,
    });
    const later = { ...base, countedAt: iso(T0 + 2 * 3_600_000) };
    expect(await store.recordPriceMove({ ...ids, ...later, dphTotal: 0.9, bidDph: null })).toBe(false);
    expect((await row(ids.rentalKey))?.dph_total).toBe(0.8);
  });
});
