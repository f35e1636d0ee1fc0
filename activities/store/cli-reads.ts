import type pg from 'pg';
import { type ReportBy, type SpendReport, spendReport } from '../../workflows/domain/policy/spend-report.js';
import { type LogTail, logTailsFor, type MachineRecord, machineRecords, spendRows } from './queries.js';

// What the operator CLI reads from the store itself (DATABASE_URL), without running a workflow: a read
// needs no history, and answers in one round trip to Postgres.

type Db = Pick<pg.Pool, 'query'>;

/** `machines list`: every machine marked bad, ignored ones included, newest mark first. */
export function markedMachines(db: Db): Promise<MachineRecord[]> {
  return machineRecords(db);
}

/** `logs`: the stored log tails of every rental a lifecycle's workflow id has had, newest rental first. */
export function storedLogTails(db: Db, workflowId: string): Promise<LogTail[]> {
  return logTailsFor(db, workflowId);
}

/** `report`: the fleet's costs and proofs for rentals started since a time, in real units, as of `nowMs`. */
export async function fleetSpendReport(
  db: Db,
  input: { since: string; by: ReportBy | null },
  nowMs = Date.now(),
): Promise<SpendReport> {
  return spendReport(await spendRows(db, input.since), nowMs, input.since, input.by);
}
