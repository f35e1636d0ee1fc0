import type { PerfSample } from '../../workflows/domain/policy/predictions.js';
import { FAILURE_VERDICTS } from '../../workflows/domain/policy/verdicts.js';
import type { StoreDeps } from './deps.js';
import * as q from './queries.js';

// What the scaler, the reconciler and a lifecycle's verdict read about machines and rentals.

/** Machines the scaler lets rest: inconclusive too often within the window (bounded retries). */
export function restingMachines({ pool }: StoreDeps, input: { windowSec: number; retries: number }): Promise<number[]> {
  const retryTypes = Object.entries(FAILURE_VERDICTS)
    .filter(([, rule]) => rule.verdict === 'inconclusive' && rule.retry)
    .map(([type]) => type);
  return q.restingMachines(pool, { ...input, retryTypes });
}

/** The machine's standing before its benchmark: a machine back from an expired mark is on probation. */
export async function machineStanding(
  { pool }: StoreDeps,
  input: { machineId: number },
): Promise<{ standing: q.Standing; reason: string | null }> {
  const s = await q.machineStanding(pool, input.machineId);
  return { standing: s.standing, reason: s.reason };
}

/** Which rental of its offer a lifecycle is (1 for the first), for its list entry and search attribute. */
export function rentalNumber({ pool }: StoreDeps, input: { workflowId: string; rentalKey: string }): Promise<number> {
  return q.rentalNumber(pool, input.workflowId, input.rentalKey);
}

export function listBadMachines({ pool }: StoreDeps): Promise<number[]> {
  return q.listBadMachineIds(pool);
}

/** What the scaler's predictions learn from (predictions.ts): each machine's last benchmark and hardware. */
export function perfSamples({ pool }: StoreDeps): Promise<PerfSample[]> {
  return q.perfSamples(pool);
}

export function rentedInstances({ pool }: StoreDeps): Promise<q.FleetRow[]> {
  return q.rentedRows(pool);
}

export function workflowForLabel({ pool }: StoreDeps, label: string): Promise<string | null> {
  return q.workflowForLabel(pool, label);
}
