import { type ActivityOptions, proxyActivities } from '@temporalio/workflow';
import type { NotifyActivities } from '../activities/notify/activities.js';
import type { NotifyEvent } from '../activities/notify/event.js';

/**
 * A notification is worth a few tries, never a delay of the fleet: short attempts, a hard
 * schedule-to-close bound, then it is dropped (the metric and the log line still record the event).
 */
export const notifyOptions: ActivityOptions = {
  startToCloseTimeout: '10 seconds',
  scheduleToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '8 seconds' },
};

const activities = proxyActivities<NotifyActivities>(notifyOptions);

/**
 * Sends an event to the operator's webhook (a no-op when none is configured). Never throws: a receiver
 * that is down must not fail or hold up a lifecycle. Callers that keep running do not await it; callers
 * about to end await it (a workflow that closes drops its pending activities), which the bound keeps short.
 */
export function notify(event: NotifyEvent): Promise<void> {
  // Failed or cancelled (the caller was cancelled): either way the lifecycle goes on.
  return activities.notify.executeWithOptions({ summary: `notify the webhook: ${event.kind}` }, [event]).then(
    () => undefined,
    () => undefined,
  );
}
