import type { Client } from '@temporalio/client';
import { lifecycleStatusQuery } from '../../workflows/definitions.js';

/**
 * Waits until a lifecycle has a verdict: promoted (it keeps running, watching the host) or closed.
 * Fails after `timeoutMs` so a stuck lifecycle fails the test instead of hanging it.
 */
export async function waitForVerdict(
  client: Client,
  workflowId: string,
  timeoutMs = 180_000,
): Promise<'promoted' | 'closed'> {
  const handle = client.workflow.getHandle(workflowId);
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const desc = await handle.describe();
    if (desc.status.name !== 'RUNNING') return 'closed';
    const status = await handle.query(lifecycleStatusQuery).catch(() => null);
    if (status?.stage === 'promoted') return 'promoted';
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${workflowId} reached no verdict within ${timeoutMs} ms`);
}
