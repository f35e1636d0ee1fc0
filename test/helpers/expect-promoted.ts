import { WorkflowFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { waitForVerdict } from '../../infra/dev/verdict.js';

/**
 * Waits for a lifecycle's promotion. When it closes instead, fails with how it ended (status, failure type
 * and message), so a run that went wrong on a shared CI machine says why, not just "closed".
 */
export async function expectPromoted(client: Client, workflowId: string, timeoutMs?: number): Promise<void> {
  if ((await waitForVerdict(client, workflowId, timeoutMs)) === 'promoted') return;
  const handle = client.workflow.getHandle(workflowId);
  const status = (await handle.describe()).status.name;
  const ended = await handle.result().then(
    (r: unknown) => `it completed with ${JSON.stringify(r).slice(0, 400)}`,
    (e: unknown) => `it ended with ${describe(e)}`,
  );
  throw new Error(`expected ${workflowId} promoted, but it closed ${status}: ${ended}`);
}

function describe(e: unknown): string {
  const cause = e instanceof WorkflowFailedError ? e.cause : e;
  if (cause instanceof ApplicationFailure) return `${cause.type ?? 'ApplicationFailure'}: ${cause.message}`;
  return cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
}
