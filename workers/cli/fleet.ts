import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { SA } from '../../workflows/domain/search-attributes.js';
import { LIFECYCLE_WORKFLOW_TYPE } from '../../workflows/domain/task-queues.js';
import { costAt, openLedger } from '../../workflows/domain/policy/cost.js';
import type { Clock } from '../../workflows/domain/policy/clock.js';
import { chainStartOfRuns, type RunStart, runsByWorkflowId } from './age.js';
import { memoClock } from './memo-clock.js';
import { realAgeSec } from './units.js';

export interface FleetRow {
  workflowId: string;
  instanceId: number | null;
  gpu: string | null;
  machineId: string | null;
  stage: string;
  /** The benchmark's rate in real proofs per hour; null until it is measured. */
  benchRateProofsPerHour: number | null;
  dollarsPerHour: number | null;
  /** Cost to date (docs/operating.md): CostUsd counted on from CostCountedAt at the billed price to now. */
  costUsd: number | null;
  rentalStartedAt: string;
  /** Real seconds since the rental's first run started (to its close, for an ended one). */
  ageSec: number;
  /** When an ended lifecycle closed (`--ended`); null while it runs. Its costUsd is then final. */
  endedAt: string | null;
}

export interface FleetTotals {
  lifecycles: number;
  byStage: Record<string, number>;
  /** Sum of the promoted instances' benchmark rates: what the fleet proves. */
  promotedProofsPerHour: number;
  /** What every running lifecycle bills, benchmarking ones included. */
  dollarsPerHour: number;
  /** The fleet's whole hourly bill over what it proves; null while nothing is promoted. */
  dollarsPerProof: number | null;
  /** What every listed lifecycle (running and ended) has cost to date, GPU-$. */
  costUsd: number;
  /** The lifecycles closed within `--ended`'s window; null without it. */
  ended: EndedTotals | null;
}

export interface EndedTotals {
  /** The window's start: lifecycles that closed after it are listed. */
  since: string;
  lifecycles: number;
  /** By outcome and failure type, as their rows' stage. */
  byStage: Record<string, number>;
  /** Their cost to date, closed at the destroy, GPU-$. */
  costUsd: number;
}

/** Statuses a lifecycle ends in; ContinuedAsNew is left out: the rental goes on in the next run. */
const CLOSED = `ExecutionStatus IN ("Completed", "Failed", "Canceled", "Terminated", "TimedOut")`;

/**
 * Cost to date from what visibility keeps: the sum the lifecycle counted at its last upsert, counted on at
 * its billed price with the one ledger (policy/cost.ts), so a list and `status` agree.
 */
export function costToDate(
  countedUsd: number | undefined,
  countedAt: Date | undefined,
  dph: number | undefined,
  clock: Clock,
  nowMs: number,
): number | null {
  if (countedUsd === undefined) return null;
  if (countedAt === undefined || dph === undefined) return countedUsd;
  const ledger = { ...openLedger(dph, countedAt.getTime(), clock), beforeVerdictUsd: countedUsd };
  return costAt(ledger, nowMs).totalUsd;
}

/** What `--ended` asks for beside the running lifecycles: those closed after `endedSinceMs`. */
export interface FleetQuery {
  now?: number;
  endedSinceMs?: number;
}

/** The visibility query for lifecycles that closed after `sinceMs`: one query, however many. */
export function endedQuery(sinceMs: number): string {
  return `WorkflowType = "${LIFECYCLE_WORKFLOW_TYPE}" AND ${CLOSED} AND CloseTime > "${new Date(sinceMs).toISOString()}"`;
}

/**
 * An ended lifecycle's stage: its verdict as the verdict messages say it (`killed BenchRateBelowMin`,
 * `promoted`), with how the run closed when that says more (an operator's terminate of a promoted host).
 */
export function endedStage(outcome: string | undefined, failureType: string | undefined, status: string): string {
  const closed = status.toLowerCase().replace(/_/g, ' ');
  if (!outcome) return failureType ? `${closed} ${failureType}` : closed;
  const verdict = outcome === 'killed' && failureType ? `killed ${failureType}` : outcome;
  return status === 'FAILED' || status === 'COMPLETED' ? verdict : `${verdict}, ${closed}`;
}

async function listAll(client: Client, query: string): Promise<WorkflowExecutionInfo[]> {
  const out: WorkflowExecutionInfo[] = [];
  for await (const wf of client.workflow.list({ query })) out.push(wf);
  return out;
}

/**
 * Running lifecycles from Temporal visibility, with the search attributes they keep current; with
 * `endedSinceMs`, also those closed since, each at its final CostUsd (counted to the destroy at its last
 * upsert, so not counted on). The runs of both are read in the one batch.
 */
export async function fleetStatus(client: Client, q: FleetQuery = {}): Promise<FleetRow[]> {
  const now = q.now ?? Date.now();
  const [running, ended] = await Promise.all([
    listAll(client, `WorkflowType = "${LIFECYCLE_WORKFLOW_TYPE}" AND ExecutionStatus = "Running"`),
    q.endedSinceMs === undefined ? [] : listAll(client, endedQuery(q.endedSinceMs)),
  ]);
  const ids = [...new Set([...running, ...ended].map((wf) => wf.workflowId))];
  const runs = await runsByWorkflowId(client, ids);
  const rows = [...running, ...ended].map((wf) => fleetRow(wf, runs.get(wf.workflowId) ?? [], now));
  // Per lifecycle id, the running rental before an ended one under the same id.
  return rows.sort(
    (a, b) => a.workflowId.localeCompare(b.workflowId) || Number(a.endedAt !== null) - Number(b.endedAt !== null),
  );
}

function fleetRow(wf: WorkflowExecutionInfo, runs: readonly RunStart[], now: number): FleetRow {
  const sa = wf.typedSearchAttributes;
  const model = sa.get(SA.gpuModel);
  const rate = sa.get(SA.benchRate);
  const start = chainStartOfRuns(runs, wf.startTime);
  const closedAt = wf.status.name === 'RUNNING' ? undefined : wf.closeTime;
  const clock = memoClock(wf.memo);
  return {
    workflowId: wf.workflowId,
    instanceId: sa.get(SA.vastInstanceId) ?? null,
    gpu: model ? `${sa.get(SA.gpuCount) ?? 1}x ${model}` : null,
    machineId: sa.get(SA.machineId) ?? null,
    stage:
      closedAt === undefined
        ? (sa.get(SA.stage) ?? 'provisioning')
        : endedStage(sa.get(SA.outcome), sa.get(SA.failureType), wf.status.name),
    // Real proofs/h already: the lifecycle converts its clock (workflows/domain/policy/clock.ts).
    benchRateProofsPerHour: rate === undefined ? null : Math.round(rate * 10) / 10,
    dollarsPerHour: sa.get(SA.dollarsPerHour) ?? null,
    costUsd:
      closedAt === undefined
        ? costToDate(sa.get(SA.costUsd), sa.get(SA.costCountedAt), sa.get(SA.dollarsPerHour), clock, now)
        : (sa.get(SA.costUsd) ?? null),
    rentalStartedAt: start.toISOString(),
    // On the lifecycle's own clock: each carries it in its memo.
    ageSec: realAgeSec((closedAt?.getTime() ?? now) - start.getTime(), clock),
    endedAt: closedAt?.toISOString() ?? null,
  };
}

/**
 * Totals: per stage, proofs/h and $/h of the running lifecycles (what the fleet proves and bills now);
 * cost to date of every listed row, and of the ended ones apart when `endedSince` is given.
 */
export function fleetTotals(rows: FleetRow[], endedSince?: string): FleetTotals {
  const running = rows.filter((r) => r.endedAt === null);
  const ended = rows.filter((r) => r.endedAt !== null);
  let proofs = 0;
  let dph = 0;
  for (const r of running) {
    if (r.stage === 'promoted') proofs += r.benchRateProofsPerHour ?? 0;
    dph += r.dollarsPerHour ?? 0;
  }
  return {
    lifecycles: running.length,
    byStage: countStages(running),
    promotedProofsPerHour: Math.round(proofs * 10) / 10,
    dollarsPerHour: Math.round(dph * 1000) / 1000,
    dollarsPerProof: proofs > 0 ? dph / proofs : null,
    costUsd: sumCost(rows),
    ended:
      endedSince === undefined
        ? null
        : { since: endedSince, lifecycles: ended.length, byStage: countStages(ended), costUsd: sumCost(ended) },
  };
}

function countStages(rows: readonly FleetRow[]): Record<string, number> {
  const byStage: Record<string, number> = {};
  for (const r of rows) byStage[r.stage] = (byStage[r.stage] ?? 0) + 1;
  return byStage;
}

const sumCost = (rows: readonly FleetRow[]) => Math.round(rows.reduce((s, r) => s + (r.costUsd ?? 0), 0) * 1e6) / 1e6;
