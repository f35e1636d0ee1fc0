import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { SA } from '../../workflows/domain/search-attributes.js';
import { LIFECYCLE_WORKFLOW_TYPE } from '../../workflows/domain/task-queues.js';
import { costAt, openLedger } from '../../workflows/domain/policy/cost.js';
import type { Clock } from '../../workflows/domain/policy/clock.js';
import { chainStartOfRuns, runsByWorkflowId } from './age.js';
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
  /** Real seconds since the rental's first run started. */
  ageSec: number;
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
  /** What the listed lifecycles have cost to date, GPU-$. */
  costUsd: number;
}

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

/** Running lifecycles from Temporal visibility, with the search attributes they keep current. */
export async function fleetStatus(client: Client, now = Date.now()): Promise<FleetRow[]> {
  const running: WorkflowExecutionInfo[] = [];
  for await (const wf of client.workflow.list({
    query: `WorkflowType = "${LIFECYCLE_WORKFLOW_TYPE}" AND ExecutionStatus = "Running"`,
  }))
    running.push(wf);
  const runs = await runsByWorkflowId(
    client,
    running.map((wf) => wf.workflowId),
  );
  const rows: FleetRow[] = [];
  for (const wf of running) {
    const sa = wf.typedSearchAttributes;
    const model = sa.get(SA.gpuModel);
    const rate = sa.get(SA.benchRate);
    const start = chainStartOfRuns(runs.get(wf.workflowId) ?? [], wf.startTime);
    rows.push({
      workflowId: wf.workflowId,
      instanceId: sa.get(SA.vastInstanceId) ?? null,
      gpu: model ? `${sa.get(SA.gpuCount) ?? 1}x ${model}` : null,
      machineId: sa.get(SA.machineId) ?? null,
      stage: sa.get(SA.stage) ?? 'provisioning',
      // Real proofs/h already: the lifecycle converts its clock (workflows/domain/policy/clock.ts).
      benchRateProofsPerHour: rate === undefined ? null : Math.round(rate * 10) / 10,
      dollarsPerHour: sa.get(SA.dollarsPerHour) ?? null,
      costUsd: costToDate(
        sa.get(SA.costUsd),
        sa.get(SA.costCountedAt),
        sa.get(SA.dollarsPerHour),
        memoClock(wf.memo),
        now,
      ),
      rentalStartedAt: start.toISOString(),
      // On the lifecycle's own clock: each carries it in its memo.
      ageSec: realAgeSec(now - start.getTime(), memoClock(wf.memo)),
    });
  }
  return rows.sort((a, b) => a.workflowId.localeCompare(b.workflowId));
}

export function fleetTotals(rows: FleetRow[]): FleetTotals {
  const byStage: Record<string, number> = {};
  let proofs = 0;
  let dph = 0;
  let cost = 0;
  for (const r of rows) {
    cost += r.costUsd ?? 0;
    byStage[r.stage] = (byStage[r.stage] ?? 0) + 1;
    if (r.stage === 'promoted') proofs += r.benchRateProofsPerHour ?? 0;
    dph += r.dollarsPerHour ?? 0;
  }
  return {
    lifecycles: rows.length,
    byStage,
    promotedProofsPerHour: Math.round(proofs * 10) / 10,
    dollarsPerHour: Math.round(dph * 1000) / 1000,
    dollarsPerProof: proofs > 0 ? dph / proofs : null,
    costUsd: Math.round(cost * 1e6) / 1e6,
  };
}
