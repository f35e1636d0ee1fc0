import type { Client } from '@temporalio/client';

/**
 * When a lifecycle's chain of runs began. A promoted instance continues as new every few hundred
 * samples, and each run has its own start time; the rental's age is the start of the oldest run in the
 * unbroken ContinuedAsNew streak before the current one (an earlier rental under the same id ended
 * closed, so the walk stops there).
 */
export async function chainStart(client: Client, workflowId: string, currentStart: Date): Promise<Date> {
  return chainStartOf(await runsOf(client, workflowId), currentStart);
}

/** A run of a workflow id as visibility lists it: when it started and how it ended. */
export interface RunStart {
  start: Date;
  status: string;
}

/** Every run under a workflow id (visibility), for chainStartOf. */
export async function runsOf(client: Client, workflowId: string): Promise<RunStart[]> {
  const runs: RunStart[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowId = ${JSON.stringify(workflowId)}` })) {
    runs.push({ start: wf.startTime, status: wf.status.name });
  }
  return runs;
}

/** chainStart over runs already listed: `status` lists them beside its other calls, not after. */
export function chainStartOf(runs: readonly RunStart[], currentStart: Date): Date {
  const older = runs
    .filter((r) => r.start.getTime() < currentStart.getTime())
    .sort((a, b) => b.start.getTime() - a.start.getTime());
  let start = currentStart;
  for (const r of older) {
    if (r.status !== 'CONTINUED_AS_NEW') break;
    start = r.start;
  }
  return start;
}
