import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createStoreActivities } from '../../activities/store/activities.js';
import { machineBlock, offerOn, recordRental } from '../helpers/store-rentals.js';
import type { BenchmarkReport } from '../../workflows/domain/types.js';

// Machine ids of this file's own block: the test database is shared by every file.
const machine = machineBlock(700_000_000);
let pool: pg.Pool;
let store: ReturnType<typeof createStoreActivities>;
const seq = `interrupt_once_${machine}`;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: inject('databaseUrl'), max: 4 });
  store = createStoreActivities({ pool });
  // A write that dies between the verdict and the machine count: the backend is terminated inside the
  // statement (the connection is lost mid-transaction), once per machine armed below. A sequence, not
  // a table, counts the attempts: nextval survives the rollback.
  await pool.query(`CREATE SEQUENCE ${seq}`);
  await pool.query(`
    CREATE FUNCTION ${seq}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.machine_id = ANY (TG_ARGV::bigint[]) AND nextval('${seq}') = 1 THEN
        PERFORM pg_terminate_backend(pg_backend_pid());
        PERFORM pg_sleep(5);
      END IF;
      RETURN NEW;
    END $$`);
});
afterAll(async () => {
  await pool.query(`DROP TRIGGER IF EXISTS ${seq} ON machine_failures`);
  await pool.query(`DROP TRIGGER IF EXISTS ${seq} ON host_perf`);
  await pool.query(`DROP FUNCTION IF EXISTS ${seq}()`);
  await pool.query(`DROP SEQUENCE IF EXISTS ${seq}`);
  await pool.end();
});

async function arm(table: 'machine_failures' | 'host_perf', machineId: number): Promise<void> {
  await pool.query(`ALTER SEQUENCE ${seq} RESTART WITH 1`);
  await pool.query(`DROP TRIGGER IF EXISTS ${seq} ON ${table}`);
  await pool.query(
    `CREATE TRIGGER ${seq} BEFORE INSERT OR UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION ${seq}('${machineId}')`,
  );
}

const rental = (machineId: number) => recordRental(store, machineId);

async function state(rentalKey: string, machineId: number) {
  const inst = await pool.query<{ outcome: string | null }>('SELECT outcome FROM instances WHERE rental_key = $1', [
    rentalKey,
  ]);
  const fails = await pool.query<{ count: number }>(
    `SELECT count FROM machine_failures WHERE machine_id = $1 AND failure_type = 'HostLost'`,
    [machineId],
  );
  const bad = await pool.query('SELECT reason FROM bad_machines WHERE machine_id = $1', [machineId]);
  return { outcome: inst.rows[0]?.outcome ?? null, failures: fails.rows[0]?.count ?? 0, bad: bad.rowCount === 1 };
}

describe('recordOutcome is one transaction', () => {
  it('a write interrupted between the verdict and the count leaves neither; the retry counts once', async () => {
    const m = machine + 1;
    const first = await rental(m);
    const killed = {
      outcome: 'killed' as const,
      failureType: 'HostLost' as const,
      reason: 'gone',
      machineId: m,
      destroyed: true,
    };
    await arm('machine_failures', m);
    await expect(store.recordOutcome({ ...first, ...killed })).rejects.toThrow();
    // Non-transactional, the verdict would stand here and the retry would see "already recorded".
    expect(await state(first.rentalKey, m)).toEqual({ outcome: null, failures: 0, bad: false });

    expect(await store.recordOutcome({ ...first, ...killed })).toEqual({ markedBad: false });
    expect(await state(first.rentalKey, m)).toEqual({ outcome: 'killed', failures: 1, bad: false });
    // Delivered again after it committed (a lost completion): counts nothing more.
    expect(await store.recordOutcome({ ...first, ...killed })).toEqual({ markedBad: false });
    expect(await state(first.rentalKey, m)).toEqual({ outcome: 'killed', failures: 1, bad: false });

    // The same machine's next rental fails the same way: the second strike marks it.
    const second = await rental(m);
    expect(await store.recordOutcome({ ...second, ...killed })).toEqual({ markedBad: true });
    expect(await state(second.rentalKey, m)).toEqual({ outcome: 'killed', failures: 2, bad: true });
    const why = await pool.query<{ reason: string; source: string }>(
      'SELECT reason, source FROM bad_machines WHERE machine_id = $1',
      [m],
    );
    expect(why.rows[0]).toEqual({ reason: 'HostLost x2: gone', source: 'rule' });
  });

  it('recordBenchmark interrupted before host_perf moves leaves no result; the retry counts the benchmark once', async () => {
    const m = machine + 2;
    const ids = await rental(m);
    const report: BenchmarkReport = {
      requested: 4,
      completed: 4,
      elapsedMs: 4000,
      concurrency: 2,
      timings: [],
      deadlineReached: false,
    };
    const bench = { ...ids, offer: offerOn(m), report, rate: 3600 };
    await arm('host_perf', m);
    await expect(store.recordBenchmark(bench)).rejects.toThrow();
    const results = () => pool.query('SELECT 1 FROM benchmark_results WHERE rental_key = $1', [ids.rentalKey]);
    const perf = async () =>
      (await pool.query<{ benchmarks: number }>('SELECT benchmarks FROM host_perf WHERE machine_id = $1', [m])).rows[0]
        ?.benchmarks ?? 0;
    expect((await results()).rowCount).toBe(0);
    expect(await perf()).toBe(0);
    await store.recordBenchmark(bench);
    await store.recordBenchmark(bench);
    expect((await results()).rowCount).toBe(1);
    expect(await perf()).toBe(1);
  });
});
