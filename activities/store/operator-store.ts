import type { StoreDeps } from './deps.js';
import * as q from './queries.js';

// What the operator's admin workflows (fleet-admin.ts) read and override in the store; the CLI reads the rest itself (cli-reads.ts).

/** Read-only: marked machines with reason, source, ignored and when. */
export function machineRecords({ pool }: StoreDeps, input: { machineId?: number } = {}): Promise<q.MachineRecord[]> {
  return q.machineRecords(pool, input.machineId);
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
