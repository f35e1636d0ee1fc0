import type { Client } from '@temporalio/client';

/**
 * Cancels a lifecycle and waits until it has closed, so its cleanup (destroy, record) has run before
 * the test's worker shuts down; otherwise a promoted row would outlive the test in the shared database.
 */
export async function cancelAndWait(client: Client, workflowId: string): Promise<void> {
  const handle = client.workflow.getHandle(workflowId);
  await handle.cancel();
  await handle.result().catch(() => undefined);
}
