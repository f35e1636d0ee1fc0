import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { queryStatus, signalKillRequest } from '../messages.js';
import { CliError, type CliContext } from '../context.js';

export interface KillResult {
  ok: boolean;
  workflowId: string;
  instanceId: number | null;
  /** confirmed: the destroy activity completed; none-rented: nothing to destroy; requested: --no-wait. */
  destroy: 'confirmed' | 'none-rented' | 'failed' | 'requested' | 'unconfirmed';
  execution: string;
  message: string;
}

type Event = temporal.api.history.v1.IHistoryEvent;

/** The instance destroy the lifecycle ran, read from its history: completed, failed, or never run. */
function destroyIn(events: Event[]): 'completed' | 'failed' | 'none' {
  const scheduled = new Set(
    events
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'destroyInstance')
      .map((e) => String(e.eventId)),
  );
  if (scheduled.size === 0) return 'none';
  const done = events.some(
    (e) =>
      e.activityTaskCompletedEventAttributes &&
      scheduled.has(String(e.activityTaskCompletedEventAttributes.scheduledEventId)),
  );
  return done ? 'completed' : 'failed';
}

/** The run's status once it closes, or RUNNING if it has not within `timeoutSec`. */
async function closedStatus(client: Client, workflowId: string, runId: string, timeoutSec: number): Promise<string> {
  const until = Date.now() + timeoutSec * 1000;
  let status = 'RUNNING';
  while (Date.now() < until) {
    status = (await client.workflow.getHandle(workflowId, runId).describe()).status.name;
    if (status !== 'RUNNING') break;
    await new Promise((r) => setTimeout(r, 500));
  }
  return status;
}

/**
 * Tells a running lifecycle who kills it and why, cancels it, then (unless told not to) waits for it to
 * close and reads from its history whether the instance destroy really completed.
 */
export async function killLifecycle(
  client: Client,
  ctx: CliContext,
  workflowId: string,
  opts: { reason: string; wait: boolean; timeout: number },
): Promise<KillResult> {
  const handle = client.workflow.getHandle(workflowId);
  const desc = await handle.describe();
  if (desc.status.name !== 'RUNNING')
    throw new CliError(
      `${workflowId} is already ${desc.status.name.toLowerCase()}: there is nothing to kill, and no instance of it is destroyed now`,
    );
  const before = await queryStatus(handle).catch(() => null);
  // Who and why first, on the same run: the lifecycle keeps them for its summary, status, store, log
  // line and notification (a cancel request's own reason is in history only, out of the workflow's reach).
  await signalKillRequest(client.workflow.getHandle(workflowId, desc.runId), { reason: opts.reason, by: ctx.operator });
  await client.workflowService.requestCancelWorkflowExecution({
    namespace: ctx.namespace,
    workflowExecution: { workflowId, runId: desc.runId },
    identity: `gpu-fleet-cli/${ctx.operator}`,
    requestId: randomUUID(),
    reason: `${ctx.operator}: ${opts.reason}`,
  });
  const instanceId = before?.instanceId ?? null;
  if (!opts.wait)
    return {
      ok: true,
      workflowId,
      instanceId,
      destroy: 'requested',
      execution: 'RUNNING',
      message: `cancellation requested for ${workflowId}; it destroys instance ${instanceId ?? '(none rented yet)'} and records CancelledByOperator. Follow it: gpu-fleet status ${workflowId} --watch`,
    };
  const status = await closedStatus(client, workflowId, desc.runId, opts.timeout);
  if (status === 'RUNNING')
    return {
      ok: false,
      workflowId,
      instanceId,
      destroy: 'unconfirmed',
      execution: status,
      message: `${workflowId} has not closed within ${opts.timeout} s; the destroy is not confirmed. Check: gpu-fleet status ${workflowId}`,
    };
  const history = await client.workflow.getHandle(workflowId, desc.runId).fetchHistory();
  const destroy = destroyIn(history.events ?? []);
  if (destroy === 'completed')
    return {
      ok: true,
      workflowId,
      instanceId,
      destroy: 'confirmed',
      execution: status,
      message:
        `${workflowId} ${status.toLowerCase()}: instance ${instanceId ?? ''} destroyed (confirmed in its history)`.replace(
          '  ',
          ' ',
        ),
    };
  if (destroy === 'none' && instanceId === null)
    return {
      ok: true,
      workflowId,
      instanceId,
      destroy: 'none-rented',
      execution: status,
      message: `${workflowId} ${status.toLowerCase()}: no instance had been rented, so there was nothing to destroy`,
    };
  return {
    ok: false,
    workflowId,
    instanceId,
    destroy: 'failed',
    execution: status,
    message: `${workflowId} ${status.toLowerCase()} but the destroy of instance ${instanceId ?? '?'} did not complete: it may still be billing. Destroy it by hand and see its history.`,
  };
}
