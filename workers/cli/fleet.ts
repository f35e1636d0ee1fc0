import type { Client } from '@temporalio/client';

export interface FleetRow {
  workflowId: string;
  instance: number | string;
  gpu: string;
  machine: string;
  stage: string;
  rate: number | string;
  dph: number | string;
  age: string;
}

function first(sa: Record<string, unknown[] | undefined> | undefined, key: string): unknown {
  return sa?.[key]?.[0];
}

function age(start: Date, now: number): string {
  const min = Math.floor((now - start.getTime()) / 60_000);
  return min < 60 ? `${min}m` : `${Math.floor(min / 60)}h${String(min % 60).padStart(2, '0')}m`;
}

/** Running lifecycles from Temporal visibility, with the search attributes they keep current. */
export async function fleetStatus(client: Client, now = Date.now()): Promise<FleetRow[]> {
  const rows: FleetRow[] = [];
  for await (const wf of client.workflow.list({
    query: 'WorkflowType = "instanceLifecycle" AND ExecutionStatus = "Running"',
  })) {
    const sa = wf.searchAttributes as Record<string, unknown[] | undefined>;
    const gpus = first(sa, 'GpuCount');
    const model = first(sa, 'GpuModel');
    rows.push({
      workflowId: wf.workflowId,
      instance: (first(sa, 'VastInstanceId') as number | undefined) ?? '-',
      gpu: model ? `${String(gpus ?? 1)}x ${String(model)}` : '-',
      machine: String(first(sa, 'MachineId') ?? '-'),
      stage: String(first(sa, 'LifecycleStage') ?? '-'),
      rate: (first(sa, 'BenchRate') as number | undefined) ?? '',
      dph: (first(sa, 'DollarsPerHour') as number | undefined) ?? '',
      age: age(wf.startTime, now),
    });
  }
  return rows.sort((a, b) => a.workflowId.localeCompare(b.workflowId));
}
