import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { rentedRows } from '../../activities/store/queries.js';
import { createTemporalActivities } from '../../activities/temporal/activities.js';
import { fleetFigures } from '../../workflows/domain/policy/fleet-figures.js';

/** The fleet a scaler run would count right now, in the terms of its caps. */
export interface FleetBase {
  /** Proofs/h toward the target: promoted rates (an in-flight rental predicts nothing until it is ranked). */
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
 * lifecycles in visibility) by its own policy (fleetFigures). Every test file shares one database and
 * one namespace: a lifecycle an earlier file left running, or a promoted row it left, counts into a
 * scaler's caps, so a test sets its target and caps as this base plus what it means to test.
 */
export async function fleetBase(client: Client, pool: pg.Pool): Promise<FleetBase> {
  const [rows, running] = await Promise.all([rentedRows(pool), createTemporalActivities({ client }).runningRentals()]);
  const now = fleetFigures(rows, running);
  return {
    rate: now.promoted.reduce((s, p) => s + p.rate, 0) + now.inFlight.reduce((s, f) => s + (f.predictedRate ?? 0), 0),
    dph: [...now.promoted, ...now.inFlight].reduce((s, p) => s + p.dph, 0),
    instances: now.promoted.length + now.inFlight.length,
    benchmarks: now.inFlight.length,
  };
}
