import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../workflows/domain/failures.js';
import { backoffMs, toVastFailure } from './errors.js';

/** A Vast call inside an activity: whatever it throws becomes the failure its attempt should end with. */
export async function call<T>(fn: () => Promise<T>, context: { offerId?: number } = {}): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toVastFailure(err, Context.current().info.attempt, context);
  }
}

export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Any failure of a call that must happen (destroy, confirm): retried with backoff whatever it was. */
export function retryable(err: unknown, attempt: number): ApplicationFailure {
  const f = toVastFailure(err, attempt);
  if (!f.nonRetryable) return f;
  return ApplicationFailure.create({
    type: FailureType.VastApiError,
    message: f.message,
    nextRetryDelay: backoffMs(attempt),
    details: f.details ? [...f.details] : [],
  });
}
