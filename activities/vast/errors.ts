import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../workflows/domain/failures.js';
import { VastHttpError, VastNetworkError, VastResponseShapeError } from './client.js';

const OFFER_GONE = /no_such_ask|\b3603\b|no longer available|not available/i;

/** Jittered exponential backoff: Vast sends no Retry-After, so clients must pace themselves. */
export function backoffMs(attempt: number, baseMs = 2_000, capMs = 60_000): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/**
 * Turns a Vast client error into the failure an operator reads: auth and validation errors are final,
 * rate limits and gateway errors are retried by the activity's retry policy with a jittered delay.
 */
export function toVastFailure(err: unknown, attempt: number, context: { offerId?: number } = {}): ApplicationFailure {
  if (err instanceof VastHttpError) {
    const details = {
      status: err.status,
      error: err.errorCode ?? null,
      msg: err.vastMessage ?? null,
      body: err.bodyText.slice(0, 500),
      ...context,
    };
    // Vast's own words, as it wrote them: an operator reads `insufficient_credit: ...`, not "HTTP 200".
    const said = [err.errorCode, err.vastMessage].filter(Boolean).join(': ');
    if (err.isAuth) {
      return ApplicationFailure.create({
        type: FailureType.VastApiError,
        message: `Vast API rejected the API key (HTTP ${err.status} ${said}); check VAST_API_KEY`,
        nonRetryable: true,
        details: [details],
      });
    }
    if (context.offerId !== undefined && (err.status === 404 || err.status === 410 || OFFER_GONE.test(err.bodyText))) {
      return ApplicationFailure.create({
        type: FailureType.OfferUnavailable,
        message: `offer ${context.offerId} is no longer available (HTTP ${err.status}${said ? ` ${said}` : ''})`,
        nonRetryable: true,
        details: [details],
      });
    }
    if (err.status === 429 || err.status >= 500) {
      return ApplicationFailure.create({
        type: FailureType.VastApiError,
        message: `Vast API ${err.status === 429 ? 'rate limit' : 'server error'} on ${err.method} ${err.path} (HTTP ${err.status})`,
        nextRetryDelay: backoffMs(attempt),
        details: [details],
      });
    }
    return ApplicationFailure.create({
      type: FailureType.VastApiError,
      message: `Vast API refused ${err.method} ${err.path}: HTTP ${err.status} ${said || err.bodyText.slice(0, 200)}`,
      nonRetryable: true,
      details: [details],
    });
  }
  if (err instanceof VastNetworkError) {
    return ApplicationFailure.create({
      type: FailureType.VastApiError,
      message: err.message,
      nextRetryDelay: backoffMs(attempt),
      details: [context],
    });
  }
  if (err instanceof VastResponseShapeError) {
    // A garbled answer (an HTML error page, truncated JSON, a wrong type) is most often a bad moment
    // between us and Vast: retried within the activity's bounded attempts like any other.
    return ApplicationFailure.create({
      type: FailureType.VastApiError,
      message: err.message,
      nextRetryDelay: backoffMs(attempt),
      details: [context],
    });
  }
  if (err instanceof ApplicationFailure) return err;
  return ApplicationFailure.create({
    type: FailureType.VastApiError,
    message: err instanceof Error ? err.message : String(err),
  });
}
