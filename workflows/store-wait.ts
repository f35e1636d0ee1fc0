import { ActivityFailure, ApplicationFailure, isCancellation, sleep } from '@temporalio/workflow';
import { FailureType } from './domain/failures.js';
import { STORE_REJECTED } from './domain/store-errors.js';
import type { StoreWait } from './domain/types.js';

/** Between rounds of the store write, on a workflow timer: 5 s doubling to at most this. */
const MAX_WAIT_MS = 60_000;

/**
 * Wraps a lifecycle's store writes: a write that cannot reach Postgres is tried again without limit, on
 * workflow timers, while `onWait` tells the status query and the current details what it waits for.
 * Postgres is our record, never a reason to kill a host, so an outage only delays the lifecycle; every
 * write is idempotent (keyed by workflow and seq or stage), so a round that reached Postgres before the
 * error is not recorded twice. A write Postgres refused is our bug: Internal, never blamed on the host.
 */
export function waitingStore<S extends object>(first: S, again: S, onWait: (wait: StoreWait | null) => void): S {
  return new Proxy(first, {
    get(target, prop, receiver) {
      const call: unknown = Reflect.get(target, prop, receiver);
      if (typeof call !== 'function' || typeof prop !== 'string') return call;
      const retry = Reflect.get(again, prop) as (...a: unknown[]) => Promise<unknown>;
      return async (...args: unknown[]) => {
        let wait = null as StoreWait | null;
        for (let round = 0; ; round++) {
          try {
            const res: unknown = await (round === 0 ? (call as (...a: unknown[]) => Promise<unknown>) : retry)(...args);
            if (wait) onWait(null);
            return res;
          } catch (err) {
            if (isCancellation(err)) throw err;
            const cause = err instanceof ActivityFailure ? err.cause : err;
            const message = cause instanceof Error ? cause.message : String(cause);
            if (cause instanceof ApplicationFailure && cause.type === STORE_REJECTED) {
              throw ApplicationFailure.create({
                type: FailureType.Internal,
                message: `store: ${message}`,
                nonRetryable: true,
              });
            }
            wait = {
              what: 'store',
              write: prop,
              since: wait?.since ?? new Date().toISOString(),
              attempts: round + 1,
              lastError: message.slice(0, 300),
            };
            onWait(wait);
            await sleep(Math.min(MAX_WAIT_MS, 5000 * 2 ** round), { summary: `waiting for the store (${prop})` });
          }
        }
      };
    },
  });
}
