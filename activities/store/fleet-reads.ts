import type { PerfHistory } from '../../workflows/domain/policy/offer-ranking.js';
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

/**
 * The offers preview's history (fleet-admin.ts): per machine its last benchmark; per GPU model the mean
 * rate per GPU over its machines.
 */
export async function perfHistory({ pool }: StoreDeps): Promise<PerfHistory> {
  const rows = await q.perfByMachine(pool);
  const byMachine: Record<string, number> = {};
  const sums: Record<string, { total: number; n: number }> = {};
  for (const r of rows) {
    byMachine[String(r.machineId)] = r.rate;
    const s = (sums[r.gpuName] ??= { total: 0, n: 0 });
    s.total += r.rate / Math.max(1, r.numGpus);
    s.n++;
  }
  const perGpuByModel = Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, v.total / v.n]));
  return { byMachine, perGpuByModel };
}

export function rentedInstances({ pool }: StoreDeps): Promise<q.FleetRow[]> {
  return q.rentedRows(pool);
}

export function workflowForLabel({ pool }: StoreDeps, label: string): Promise<string | null> {
  return q.workflowForLabel(pool, label);
}
