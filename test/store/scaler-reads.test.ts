import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createStoreActivities } from '../../activities/store/activities.js';
import { machineBlock, offerOn, recordRental } from '../helpers/store-rentals.js';

const machine = machineBlock(730_000_000);
let pool: pg.Pool;
let store: ReturnType<typeof createStoreActivities>;

beforeAll(() => {
  pool = new pg.Pool({ connectionString: inject('databaseUrl'), max: 2 });
  store = createStoreActivities({ pool });
});
afterAll(async () => pool?.end());

const benchmarked = (machineId: number, rate: number) =>
  pool.query(
    `INSERT INTO host_perf (machine_id, gpu_name, num_gpus, benchmarks, best_rate, last_rate, last_dph)
     VALUES ($1, 'RTX 4090', 2, 1, $2, $2, 0.8)`,
    [machineId, rate],
  );

describe('what the scaler reads', () => {
  it('perfSamples: each machine’s last benchmark with the RAM of its latest rental; one with no known RAM is left out', async () => {
    const [moved, unknown] = [machine, machine + 1];
    await recordRental(store, moved);
    // Rented again later on the same machine, now listed with 504 GB: that is the RAM the sample carries.
    await recordRental(store, moved, { offer: { ...offerOn(moved), cpuRamMb: 516_096 } });
    await benchmarked(moved, 61.5);
    await benchmarked(unknown, 70);
    const mine = (await store.perfSamples()).filter((s) => s.machineId === moved || s.machineId === unknown);
    expect(mine).toEqual([{ machineId: moved, gpuName: 'RTX 4090', numGpus: 2, cpuRamMb: 516_096, rate: 61.5 }]);
  });

  it('rentedInstances: open rentals with the hardware they rented, null before the rent wrote it', async () => {
    const [rented, early] = [machine + 2, machine + 3];
    const a = await recordRental(store, rented, { dphTotal: 0.7 });
    const b = await recordRental(store, early, { offer: null });
    const rows = await store.rentedInstances();
    expect(rows.find((r) => r.rentalKey === a.rentalKey)).toMatchObject({
      machineId: rented,
      gpuName: 'RTX 4090',
      numGpus: 2,
      cpuRamMb: 257_024,
      dphTotal: 0.7,
      outcome: null,
    });
    expect(rows.find((r) => r.rentalKey === b.rentalKey)).toMatchObject({
      machineId: null,
      gpuName: null,
      numGpus: null,
      cpuRamMb: null,
    });
  });
});
