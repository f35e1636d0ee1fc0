import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import { type FleetScalerInput, fleetScaler } from '../../workflows/fleet-scaler.js';
import { orphanReconciler } from '../../workflows/orphan-reconciler.js';
import { CONTROL_TASK_QUEUE } from '../../workflows/domain/task-queues.js';

export const SCALER_SCHEDULE_ID = 'fleet-scaler';
export const RECONCILER_SCHEDULE_ID = 'orphan-reconciler';
/** How often both schedules run in production unless the operator says otherwise (seconds). */
export const DEFAULT_SCHEDULE_INTERVAL_SEC = 600;

interface ScheduleOpts {
  scheduleId: string;
  /** The registered workflow function itself (the client sends its name), never a string that can drift. */
  workflow: Workflow;
  args: unknown[];
  intervalSec: number;
  taskQueue?: string;
  paused?: boolean;
}

/**
 * Creates a schedule, or updates it in place when it exists (safe to run on every deploy).
 * Overlap SKIP: a run still busy (a scaler waiting on a taken offer) must not race a second one.
 */
async function ensureSchedule(client: Client, o: ScheduleOpts): Promise<'created' | 'updated'> {
  const action = {
    type: 'startWorkflow' as const,
    workflowType: o.workflow,
    workflowId: `${o.scheduleId}-run`,
    taskQueue: o.taskQueue ?? CONTROL_TASK_QUEUE,
    args: o.args,
    workflowExecutionTimeout: '15 minutes',
  };
  const spec = { intervals: [{ every: `${o.intervalSec} seconds` }] };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' };
  try {
    await client.schedule.create({
      scheduleId: o.scheduleId,
      spec,
      action,
      policies,
      state: { paused: o.paused ?? false },
    });
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(o.scheduleId).update((prev) => ({ ...prev, spec, action, policies }));
    return 'updated';
  }
}

/**
 * The scaler's input as scheduled: with no webhook on the control worker (`webhook: false`), the
 * lifecycles it starts run no notify step at all; unknown (undefined) leaves the input as given.
 */
export function scheduledScalerInput(input: FleetScalerInput, webhook?: boolean): FleetScalerInput {
  return webhook === false ? { ...input, lifecycle: { ...input.lifecycle, notify: false } } : input;
}

export function ensureScalerSchedule(
  client: Client,
  opts: {
    intervalSec: number;
    input: FleetScalerInput;
    /** Whether the control worker has a webhook (the CLI asks it: workers/cli/webhook.ts). */
    webhook?: boolean;
    taskQueue?: string;
    scheduleId?: string;
    paused?: boolean;
  },
): Promise<'created' | 'updated'> {
  return ensureSchedule(client, {
    scheduleId: opts.scheduleId ?? SCALER_SCHEDULE_ID,
    workflow: fleetScaler,
    args: [scheduledScalerInput(opts.input, opts.webhook)] satisfies Parameters<typeof fleetScaler>,
    intervalSec: opts.intervalSec,
    taskQueue: opts.taskQueue,
    paused: opts.paused,
  });
}

export function ensureReconcilerSchedule(
  client: Client,
  opts: { intervalSec: number; taskQueue?: string; scheduleId?: string; paused?: boolean },
): Promise<'created' | 'updated'> {
  return ensureSchedule(client, {
    scheduleId: opts.scheduleId ?? RECONCILER_SCHEDULE_ID,
    workflow: orphanReconciler,
    args: [] satisfies Parameters<typeof orphanReconciler>,
    intervalSec: opts.intervalSec,
    taskQueue: opts.taskQueue,
    paused: opts.paused,
  });
}
