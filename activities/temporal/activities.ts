import type { Client } from '@temporalio/client';
import { instanceLabel, LIFECYCLE_WORKFLOW_TYPE, rentalKey } from '../../workflows/domain/task-queues.js';

/** A running lifecycle and its rental's key. */
export interface RunningRental {
  workflowId: string;
  rentalKey: string;
}

/** Reads Temporal's own visibility: the truth about which lifecycles are running. */
export function createTemporalActivities({ client }: { client: Client }) {
  /** The run id of the execution chain's first run, which a rental key carries (null: not running). */
  async function runningFirstRunId(workflowId: string): Promise<string | null> {
    try {
      const desc = await client.workflow.getHandle(workflowId).describe();
      if (desc.status.name !== 'RUNNING') return null;
      const first = desc.raw.workflowExecutionInfo?.firstRunId;
      if (first) return first;
      // Older servers leave it out of describe: the current run's started event names it.
      const page = await client.workflowService.getWorkflowExecutionHistory({
        namespace: client.options.namespace,
        execution: { workflowId, runId: desc.runId },
        maximumPageSize: 1,
      });
      return page.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.firstExecutionRunId || desc.runId;
    } catch (err) {
      if (err instanceof Error && err.name === 'WorkflowNotFoundError') return null;
      throw err;
    }
  }

  return {
    /**
     * Each running lifecycle with its rental's key. Visibility lists do not carry the first run id on
     * every server version, so it is read per running lifecycle (a fleet is tens of them).
     */
    async runningRentals(): Promise<RunningRental[]> {
      const found: Array<{ workflowId: string; firstRunId: string }> = [];
      for await (const wf of client.workflow.list({
        query: `WorkflowType = "${LIFECYCLE_WORKFLOW_TYPE}" AND ExecutionStatus = "Running"`,
      })) {
        found.push({ workflowId: wf.workflowId, firstRunId: wf.raw.firstRunId ?? '' });
      }
      const rentals: RunningRental[] = [];
      for (let i = 0; i < found.length; i += 16) {
        const batch = await Promise.all(
          found.slice(i, i + 16).map(async ({ workflowId, firstRunId }) => {
            const first = firstRunId || (await runningFirstRunId(workflowId));
            return first === null ? null : { workflowId, first };
          }),
        );
        for (const r of batch) {
          // Closed between the list and the describe: no longer running.
          if (r) rentals.push({ workflowId: r.workflowId, rentalKey: rentalKey(r.workflowId, r.first) });
        }
      }
      return rentals;
    },

    /**
     * Whether the lifecycle is running; given an instance's label, whether the running lifecycle is
     * that instance's rental (its workflow id may have rented the offer again since).
     */
    async isWorkflowRunning(workflowId: string, label?: string): Promise<boolean> {
      const first = await runningFirstRunId(workflowId);
      if (first === null) return false;
      if (label === undefined) return true;
      return label === instanceLabel(rentalKey(workflowId, first));
    },
  };
}

export type TemporalActivities = ReturnType<typeof createTemporalActivities>;
