import type { ActivityOptions } from '@temporalio/workflow';
import { FailureType } from './domain/failures.js';
import { STORE_REJECTED } from './domain/store-errors.js';
import { hostTaskQueue } from './domain/task-queues.js';
import type { LifecycleTimeouts } from './domain/types.js';

/** Cloud API calls: short, retried with backoff; the activity adds jitter on 429 via nextRetryDelay. */
export const vastApiOptions: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 8,
    nonRetryableErrorTypes: [FailureType.OfferUnavailable, FailureType.InstanceNeverRunning],
  },
};

/** Reads of Temporal's own visibility (is a lifecycle running?): cheap, retried a few times. */
export const temporalVisibilityOptions: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5 },
};

/** Destroy must happen or money leaks: retried for up to an hour before the workflow fails loudly. */
export const destroyOptions: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '1 hour',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes' },
};

/** Our own database: short calls, many retries (a restart of Postgres should not kill an instance). */
export const storeOptions: ActivityOptions = {
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 20 },
};

/**
 * A lifecycle's store calls (regular activities, lifecycle/journal.ts says why): retried for about
 * `storeRetrySec` (a Postgres restart), after which the workflow itself waits on workflow timers and tries
 * again without limit (workflows/store-wait.ts), so each later round is a single attempt and the status
 * says what it waits on between them.
 */
export function lifecycleStoreOptions(t: LifecycleTimeouts, round: 'first' | 'again'): ActivityOptions {
  const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds' };
  return {
    startToCloseTimeout: '15 seconds',
    retry: {
      ...retry,
      maximumAttempts: round === 'first' ? attemptsWithin(t.storeRetrySec) : 1,
      nonRetryableErrorTypes: [STORE_REJECTED],
    },
  };
}

/** Attempts whose backoffs (1 s doubling to 10 s) add up to at most `sec`; at least one. */
function attemptsWithin(sec: number): number {
  let attempts = 1;
  for (let waited = 0, next = 1; waited + next <= sec; waited += next, next = Math.min(10, next * 2)) attempts++;
  return attempts;
}

export function awaitRunningOptions(t: LifecycleTimeouts): ActivityOptions {
  return { ...vastApiOptions, startToCloseTimeout: `${t.waitRunningSec + 60} seconds`, heartbeatTimeout: '2 minutes' };
}

/**
 * Host activities run only on the rented machine's own queue. They are not retried by Temporal: the
 * workflow decides (one daemon restart on a transport error), because a blind retry would hide the cause.
 * scheduleToStart catches a host that never polls (first contact) or has vanished between calls.
 *  - `firstContact`: the host's first step (paramfetch): waits `hostConnectSec` for the host to poll.
 *  - `daemonWork`: daemon starts and warmup proofs, sized to a proof deadline plus the daemon's start.
 *  - `shortCall`: a minute (inspect the host, sample the daemon, collect diagnostics, start production).
 */
export function hostOptions(
  label: string,
  t: LifecycleTimeouts,
  kind: 'firstContact' | 'daemonWork' | 'shortCall',
): ActivityOptions {
  const startToClose = kind === 'shortCall' ? 60 : t.proofDeadlineSec + t.daemonReadySec;
  return {
    taskQueue: hostTaskQueue(label),
    scheduleToStartTimeout: `${kind === 'firstContact' ? t.hostConnectSec : t.heartbeatSec * 2} seconds`,
    startToCloseTimeout: `${kind === 'firstContact' ? t.paramfetchSec : startToClose} seconds`,
    heartbeatTimeout: `${t.heartbeatSec} seconds`,
    retry: { maximumAttempts: 1 },
  };
}

export function benchmarkOptions(label: string, t: LifecycleTimeouts): ActivityOptions {
  return {
    ...hostOptions(label, t, 'daemonWork'),
    // The workflow timer bounds the batch; this only backs it up if the timer's cancel is lost.
    startToCloseTimeout: `${t.benchmarkSec + t.proofDeadlineSec} seconds`,
    // Wait for the host to stop the daemon and hand back the partial report before destroying.
    cancellationType: 'WAIT_CANCELLATION_COMPLETED',
  };
}
