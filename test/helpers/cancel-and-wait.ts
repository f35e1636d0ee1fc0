import { WorkflowNotFoundError, type Client } from '@temporalio/client';

/**
 * Cancels a lifecycle and waits until it has closed, so its cleanup (destroy, record) has run before
 * the test's worker shuts down; otherwise a promoted row would outlive the test in the shared database.
 */
export async function cancelAndWait(client: Client, workflowId: string): Promise<void> {
  const handle = client.workflow.getHandle(workflowId);
  await handle.cancel();
  await handle.result().catch(() => undefined);
}

/**
 * Cleanup for afterAll, before the file's worker stops: cancels and awaits whichever of these lifecycles
 * still run. A test that failed midway would otherwise leave them running, and every later file's scaler
 * counts running lifecycles (one namespace, one database) into its caps.
 */
export async function cancelStillRunning(client: Client, workflowIds: Iterable<string>): Promise<void> {
  for (const id of new Set(workflowIds)) {
    const desc = await client.workflow
      .getHandle(id)
      .describe()
      .catch((err: unknown) => {
        if (err instanceof WorkflowNotFoundError) return null;
        throw err;
      });
    if (desc?.status.name !== 'RUNNING') continue;
    // It may close between the describe and the cancel: then there is nothing left to do.
    await cancelAndWait(client, id).catch((err: unknown) => {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    });
  }
}
