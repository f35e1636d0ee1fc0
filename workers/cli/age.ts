import type { Client } from '@temporalio/client';

/**
 * When a lifecycle's chain of runs began. A promoted instance continues as new every few hundred
 * samples, and each run has its own start time; the rental's age is the start of the oldest run in the
 * unbroken ContinuedAsNew streak before the current one (an earlier rental under the same id ended
 * closed, so the walk stops there).
 */
export async function chainStart(client: Client, workflowId: string, currentStart: Date): Promise<Date> {
  const runs: Array<{ start: Date; status: string }> = [];
  for await (const wf of client.workflow.list({ query: `WorkflowId = ${JSON.stringify(workflowId)}` })) {
    runs.push({ start: wf.startTime, status: wf.status.name });
  }
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
