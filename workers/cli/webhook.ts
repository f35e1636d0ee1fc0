import type { Client } from '@temporalio/client';
// Type-only: the workflow is started by its registered name, without loading workflow code at start.
import type * as Workflows from '../../workflows/index.js';

/**
 * Whether the control worker has a webhook (NOTIFY_WEBHOOK_URL is its variable, not the CLI's): asked of
 * the worker itself, so a lifecycle the CLI starts runs a notify step only where one is configured.
 */
export async function workerHasWebhook(client: Client, taskQueue: string): Promise<boolean> {
  const { webhook } = await client.workflow.execute<typeof Workflows.webhookCheck>(
    'webhookCheck' satisfies keyof typeof Workflows,
    { taskQueue, workflowId: `webhook-check-${Date.now()}`, args: [] },
  );
  return webhook;
}
