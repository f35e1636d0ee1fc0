import type { Client } from '@temporalio/client';

/** Reads Temporal's own visibility: the truth about which lifecycles are running. */
export function createTemporalActivities({ client }: { client: Client }) {
  return {
    async runningLifecycleIds(): Promise<string[]> {
      const ids: string[] = [];
      for await (const wf of client.workflow.list({
        query: 'WorkflowType = "instanceLifecycle" AND ExecutionStatus = "Running"',
      })) {
        ids.push(wf.workflowId);
      }
      return ids;
    },

    async isWorkflowRunning(workflowId: string): Promise<boolean> {
      try {
        const desc = await client.workflow.getHandle(workflowId).describe();
        return desc.status.name === 'RUNNING';
      } catch (err) {
        if (err instanceof Error && err.name === 'WorkflowNotFoundError') return false;
        throw err;
      }
    },
  };
}

export type TemporalActivities = ReturnType<typeof createTemporalActivities>;
