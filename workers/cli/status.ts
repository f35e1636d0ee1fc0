import type { Client } from '@temporalio/client';
import { lifecycleStatusQuery } from '../../workflows/definitions.js';
import type { LifecycleStatus } from '../../workflows/types.js';

export interface LiveStatus extends LifecycleStatus {
  /** Progress the running host activity last heartbeated (proofs done, elapsed), if any. */
  activity: { type: string; attempt: number; heartbeat: unknown } | null;
}

/**
 * The lifecycle's own view (its `status` query) plus the pending activity's last heartbeat, which
 * the workflow cannot see but the server keeps: together they give proofs done and elapsed live.
 */
export async function liveStatus(client: Client, workflowId: string): Promise<LiveStatus> {
  const handle = client.workflow.getHandle(workflowId);
  const [status, desc] = await Promise.all([handle.query(lifecycleStatusQuery), handle.describe()]);
  const pending = desc.raw.pendingActivities?.[0];
  let heartbeat: unknown = null;
  const payload = pending?.heartbeatDetails?.payloads?.[0]?.data;
  if (payload) {
    try {
      heartbeat = JSON.parse(Buffer.from(payload).toString('utf8'));
    } catch {
      heartbeat = null;
    }
  }
  return {
    ...status,
    activity: pending ? { type: pending.activityType?.name ?? '?', attempt: pending.attempt ?? 1, heartbeat } : null,
  };
}
