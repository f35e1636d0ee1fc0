import type { Client, WorkflowExecutionDescription } from '@temporalio/client';

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

/**
 * chainStart from a run's own description: the start of the first run of its chain (firstRunId, which
 * continue-as-new keeps and a new rental under the same id does not), one describe more only for a run
 * that continued as new; a server that does not say firstRunId gets chainStart's walk over the runs.
 */
export async function chainStartOf(client: Client, desc: WorkflowExecutionDescription): Promise<Date> {
  const first = desc.raw.workflowExecutionInfo?.firstRunId;
  if (!first) return chainStart(client, desc.workflowId, desc.startTime);
  if (first === desc.runId) return desc.startTime;
  return (await client.workflow.getHandle(desc.workflowId, first).describe()).startTime;
}
