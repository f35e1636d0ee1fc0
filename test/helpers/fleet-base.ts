import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { perfSamples, rentedRows } from '../../activities/store/queries.js';
import { createTemporalActivities } from '../../activities/temporal/activities.js';
import { portfolioFleet } from '../../workflows/domain/policy/scaler-ranking.js';

/** The fleet a scaler run would count right now, in the terms of its caps. */
export interface FleetBase {
  /** Proofs/h toward the target: promoted rates, and what in-flight rentals' hardware is expected to prove. */
  rate: number;
  /** $/h against the budget: promoted and in-flight rentals. */
  dph: number;
  /** Against maxInstances: promoted and in-flight rentals. */
  instances: number;
  /** Against maxConcurrentBenchmarks: in-flight rentals (no verdict yet, lifecycle running). */
  benchmarks: number;
}

/**
 * What is already there, counted from the scaler's own reads (the store's open rows, the running
 * lifecycles in visibility, the benchmarks) by its own policy (portfolioFleet). Every test file shares one database and
 * one namespace: a lifecycle an earlier file left running, or a promoted row it left, counts into a
 * scaler's caps, so a test sets its target and caps as this base plus what it means to test.
 */
export async function fleetBase(client: Client, pool: pg.Pool): Promise<FleetBase> {
  const [rows, running, samples] = await Promise.all([
    rentedRows(pool),
    createTemporalActivities({ client }).runningRentals(),
    perfSamples(pool),
  ]);
  const now = portfolioFleet(rows, running, samples);
  return {
    rate: now.promoted.reduce((s, p) => s + p.rate, 0) + now.inFlight.reduce((s, f) => s + (f.predictedRate ?? 0), 0),
    dph: [...now.promoted, ...now.inFlight].reduce((s, p) => s + p.dph, 0),
    instances: now.promoted.length + now.inFlight.length,
    benchmarks: now.inFlight.length,
  };
}
