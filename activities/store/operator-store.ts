import { type ReportBy, type SpendReport, spendReport } from '../../workflows/domain/policy/spend-report.js';
import type { StoreDeps } from './deps.js';
import * as q from './queries.js';

// What the operator CLI reads and overrides in the store.

/** Read-only: marked machines with reason, source, ignored and when. */
export function machineRecords({ pool }: StoreDeps, input: { machineId?: number } = {}): Promise<q.MachineRecord[]> {
  return q.machineRecords(pool, input.machineId);
}

/** Read-only: a lifecycle's stored log tails. */
export function logTails({ pool }: StoreDeps, workflowId: string): Promise<q.LogTail[]> {
  return q.logTailsFor(pool, workflowId);
}

/** Read-only, for `report`: the fleet's costs and proofs since a time, in real units. */
export async function fleetSpend(
  { pool }: StoreDeps,
  input: { since: string; by: ReportBy | null },
): Promise<SpendReport> {
  return spendReport(await q.spendRows(pool, input.since), Date.now(), input.since, input.by);
}

/** Operator override of the bad-machine rule; false when the machine was never marked. */
export async function markMachine(
  { pool }: StoreDeps,
  input: { machineId: number; action: 'bad' | 'ignore' | 'unignore'; reason: string },
): Promise<boolean> {
  if (input.action === 'bad') {
    await q.markBad(pool, input.machineId, input.reason, 'operator');
    return true;
  }
  return q.setIgnored(pool, input.machineId, input.action === 'ignore');
}
