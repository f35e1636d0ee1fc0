import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { FleetScalerInput } from '../workflows/fleet-scaler.js';
import { CONTROL_TASK_QUEUE } from '../workflows/task-queues.js';

export const SCALER_SCHEDULE_ID = 'fleet-scaler';

/**
 * Creates the scaler's schedule, or updates it in place when it exists (safe to run on every deploy).
 * Overlap SKIP: a run still waiting on a taken offer must not race a second run renting the same caps.
 */
export async function ensureScalerSchedule(
  client: Client,
  opts: { intervalSec: number; input: FleetScalerInput; taskQueue?: string; scheduleId?: string; paused?: boolean },
): Promise<'created' | 'updated'> {
  const scheduleId = opts.scheduleId ?? SCALER_SCHEDULE_ID;
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'fleetScaler',
    workflowId: `${scheduleId}-run`,
    taskQueue: opts.taskQueue ?? CONTROL_TASK_QUEUE,
    args: [opts.input],
    workflowExecutionTimeout: '15 minutes',
  };
  const spec = { intervals: [{ every: `${opts.intervalSec} seconds` }] };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' };
  try {
    await client.schedule.create({ scheduleId, spec, action, policies, state: { paused: opts.paused ?? false } });
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((prev) => ({ ...prev, spec, action, policies }));
    return 'updated';
  }
}
