import type { Client, WorkflowExecutionDescription } from '@temporalio/client';

/** A run under a workflow id as visibility lists it: when it started and how it ended. */
export interface RunStart {
  start: Date;
  status: string;
}

/** Ids per visibility query when `fleet status` reads the runs of every running lifecycle at once. */
const IDS_PER_QUERY = 50;

/**
 * When a lifecycle's chain of runs began. A promoted instance continues as new every few hundred
 * samples, and each run has its own start time; the rental's age is the start of the oldest run in the
 * unbroken ContinuedAsNew streak before the current one (an earlier rental under the same id ended
 * closed, so the walk stops there).
 */
export function chainStartOfRuns(runs: readonly RunStart[], currentStart: Date): Date {
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
 * The runs of several workflow ids, by id: one visibility query per 50 ids rather than one per id, so
 * `fleet status` waits on a round trip or two whatever the fleet's size.
 */
export async function runsByWorkflowId(
  client: Client,
  workflowIds: readonly string[],
): Promise<Map<string, RunStart[]>> {
  const out = new Map<string, RunStart[]>(workflowIds.map((id) => [id, []]));
  const chunks: string[][] = [];
  for (let i = 0; i < workflowIds.length; i += IDS_PER_QUERY) chunks.push(workflowIds.slice(i, i + IDS_PER_QUERY));
  await Promise.all(
    chunks.map(async (ids) => {
      const query = `WorkflowId IN (${ids.map((id) => JSON.stringify(id)).join(', ')})`;
      for await (const wf of client.workflow.list({ query })) {
        out.get(wf.workflowId)?.push({ start: wf.startTime, status: wf.status.name });
      }
    }),
  );
  return out;
}

/**
 * chainStartOfRuns from a run's own description: the start of the first run of its chain (firstRunId,
 * which continue-as-new keeps and a new rental under the same id does not), one describe more only for a
 * run that continued as new; a server that does not say firstRunId gets the walk over the runs.
 */
export async function chainStartOf(client: Client, desc: WorkflowExecutionDescription): Promise<Date> {
  const first = desc.raw.workflowExecutionInfo?.firstRunId;
  if (!first) {
    const runs = (await runsByWorkflowId(client, [desc.workflowId])).get(desc.workflowId) ?? [];
    return chainStartOfRuns(runs, desc.startTime);
  }
  if (first === desc.runId) return desc.startTime;
  return (await client.workflow.getHandle(desc.workflowId, first).describe()).startTime;
}
