import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createPool } from '../../activities/store/pool.js';
import { readFleet } from '../../workers/setup/fleet-collector.js';

/**
 * The fleet totals are a function of the store alone (a restarted worker exports the same spend): here
 * rows are added inside a transaction, whose now() is fixed, and the totals must move by exactly them.
 */
const pool = createPool(inject('databaseUrl'), 2);
afterAll(async () => pool.end());

describe('fleet totals from the store', () => {
  it('integrate billed $/h over rented hours, count states, sum promoted rates', async () => {
    const db = await pool.connect();
    try {
      await db.query('BEGIN');
      const before = await readFleet(db);
      const add = (o: {
        dph: number | null;
        instanceId: number | null;
        rentedHoursAgo: number;
        destroyedHoursAgo?: number;
        outcome?: 'promoted' | 'killed';
        rate?: number;
        stage?: string;
      }) => {
        const key = `collector-${randomUUID()}`;
        return db.query(
          `INSERT INTO instances (rental_key, workflow_id, offer_id, instance_id, dph_total, stage, outcome, bench_rate,
             rented_at, destroyed_at)
           VALUES ($1, $1, 1, $2, $3, $8, $4, $5, now() - make_interval(secs => $6::float8 * 3600),
             CASE WHEN $7::float8 IS NULL THEN NULL ELSE now() - make_interval(secs => $7::float8 * 3600) END)`,
          [
            key,
            o.instanceId,
            o.dph,
            o.outcome ?? null,
            o.rate ?? null,
            o.rentedHoursAgo,
            o.destroyedHoursAgo ?? null,
            o.stage ?? o.outcome ?? 'benchmark',
          ],
        );
      };
      // Benchmarked for an hour at $0.50/h, then killed and destroyed: $0.50.
      await add({ dph: 0.5, instanceId: 1, rentedHoursAgo: 2, destroyedHoursAgo: 1, outcome: 'killed' });
      // Promoted, 40 proofs/h, running 3 h at $1.20/h: $3.60 so far and $1.20/h now.
      await add({ dph: 1.2, instanceId: 2, rentedHoursAgo: 3, outcome: 'promoted', rate: 40 });
      // Benchmarking for 30 min at $0.80/h: $0.40.
      await add({ dph: 0.8, instanceId: 3, rentedHoursAgo: 0.5, stage: 'benchmark' });
      // Still fetching parameters for 15 min at $0.40/h: $0.10, starting, not benchmarking.
      await add({ dph: 0.4, instanceId: 5, rentedHoursAgo: 0.25, stage: 'paramfetch' });
      // Killed, destroy failed 2 h ago and still billing $0.30/h: $0.60.
      await add({ dph: 0.3, instanceId: 4, rentedHoursAgo: 2, outcome: 'killed' });
      // Never rented (the offer was taken): costs nothing.
      await add({ dph: null, instanceId: null, rentedHoursAgo: 1, outcome: 'killed' });
      const after = await readFleet(db);
      expect(after.spendUsd - before.spendUsd).toBeCloseTo(0.5 + 3.6 + 0.4 + 0.1 + 0.6, 6);
      expect(after.spendUsdPerHour - before.spendUsdPerHour).toBeCloseTo(1.2 + 0.8 + 0.4 + 0.3, 9);
      expect(after.rateProofsPerHour - before.rateProofsPerHour).toBeCloseTo(40, 9);
      expect(after.instances.promoted - before.instances.promoted).toBe(1);
      expect(after.instances.benchmarking - before.instances.benchmarking).toBe(1);
      expect(after.instances.starting - before.instances.starting).toBe(1);
      expect(after.instances.undestroyed_kill - before.instances.undestroyed_kill).toBe(1);
    } finally {
      await db.query('ROLLBACK');
      db.release();
    }
  });
});
