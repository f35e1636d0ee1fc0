import type { Client } from '@temporalio/client';
import { chainStart } from './age.js';
import { realRate, timeScale } from './units.js';

export interface FleetRow {
  workflowId: string;
  instanceId: number | null;
  gpu: string | null;
  machineId: string | null;
  stage: string;
  /** The benchmark's rate in real proofs per hour; null until it is measured. */
  benchRateProofsPerHour: number | null;
  dollarsPerHour: number | null;
  rentalStartedAt: string;
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
  timeScale: number;
}

function first(sa: Record<string, unknown[] | undefined> | undefined, key: string): unknown {
  return sa?.[key]?.[0];
}

/** Running lifecycles from Temporal visibility, with the search attributes they keep current. */
export async function fleetStatus(client: Client, now = Date.now()): Promise<FleetRow[]> {
  const scale = timeScale();
  const rows: FleetRow[] = [];
  for await (const wf of client.workflow.list({
    query: 'WorkflowType = "instanceLifecycle" AND ExecutionStatus = "Running"',
  })) {
    const sa = wf.searchAttributes as Record<string, unknown[] | undefined>;
    const model = first(sa, 'GpuModel');
    const rate = first(sa, 'BenchRate') as number | undefined;
    const start = await chainStart(client, wf.workflowId, wf.startTime);
    rows.push({
      workflowId: wf.workflowId,
      instanceId: (first(sa, 'VastInstanceId') as number | undefined) ?? null,
      gpu: model ? `${String(first(sa, 'GpuCount') ?? 1)}x ${String(model)}` : null,
      machineId: (first(sa, 'MachineId') as string | undefined) ?? null,
      stage: String(first(sa, 'LifecycleStage') ?? 'provisioning'),
      benchRateProofsPerHour: rate === undefined ? null : Math.round(realRate(rate, scale) * 10) / 10,
      dollarsPerHour: (first(sa, 'DollarsPerHour') as number | undefined) ?? null,
      rentalStartedAt: start.toISOString(),
      ageSec: Math.round((now - start.getTime()) / 1000),
    });
  }
  return rows.sort((a, b) => a.workflowId.localeCompare(b.workflowId));
}

export function fleetTotals(rows: FleetRow[]): FleetTotals {
  const byStage: Record<string, number> = {};
  let proofs = 0;
  let dph = 0;
  for (const r of rows) {
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
    timeScale: timeScale(),
  };
}
