import {
  type ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  isCancellation,
  sleep,
} from '@temporalio/workflow';
import type { BenchmarkInput } from '../../activities/gpu-host/activities.js';
import { hostTimedOut, killFailure } from '../classify.js';
import { FailureType } from '../domain/failures.js';
import { type Clock, clockRate, realDuration, realSec } from '../domain/policy/clock.js';
import { type UnheardDeadline, unheardDeadline } from '../domain/policy/deadline-evidence.js';
import type { BenchmarkPlan } from '../domain/policy/concurrency.js';
import { earlyPromotePlan, type Standing } from '../domain/policy/early-promote-plan.js';
import type { BenchmarkReport, LifecycleInput } from '../domain/types.js';

/** What the host is asked to run: the batch, and when to give up on it early. */
export function batchFor(
  input: LifecycleInput,
  plan: BenchmarkPlan,
  gpus: number,
  overridden: boolean,
  standing: Standing = 'good',
): BenchmarkInput {
  const earlyPromote = earlyPromotePlan(input, { standing, overridden, concurrency: plan.concurrency });
  return {
    count: input.benchmarkProofs,
    concurrency: plan.concurrency,
    proofDeadlineSec: input.timeouts.proofDeadlineSec,
    // An operator who already chose to keep this host wants the full batch measured, not an early stop.
    ...(input.earlyStopAfterProofs > 0 && !overridden
      ? {
          // Judge only after a full round: the first round's latencies include queueing behind
          // its own siblings (the bench measured a healthy 2x A40 at 6-way killed otherwise).
          earlyStop: {
            // The host judges on its own clock (policy/clock.ts).
            minRate: clockRate(input.minRate, input.clock),
            minProofs: Math.max(input.earlyStopAfterProofs, plan.concurrency + 1),
            gpus,
          },
        }
      : {}),
    // Early promote's bar too, so its projected rate is judged on the clock it is measured on.
    ...(earlyPromote
      ? { earlyPromote: { ...earlyPromote, minRate: clockRate(earlyPromote.minRate, input.clock) } }
      : {}),
  };
}

/** The deadline's terms, and what the workflow knows of whether it is listening to the host. */
export interface DeadlineWatch {
  benchmarkSec: number;
  heartbeatSec: number;
  clock: Clock;
  /** Since when the host's batch has gone unheard at the server (being collected by step id); null while heard. */
  unheardSince: () => number | null;
  /** The deadline passed while we were not listening: a lifecycle event (the extension's timer says it in history). */
  onUnheard: (u: UnheardDeadline) => void;
}

/**
 * Races the batch against a workflow timer. On timeout the activity is cancelled and, because it waits
 * for cancellation to complete, hands back how far it got; that partial report is the timeout's evidence.
 * A deadline that passed while we were not listening (policy/deadline-evidence.ts) is no evidence: the
 * workflow goes on listening for the host's kept batch (collected by its step id) for the time it missed,
 * judges on what the host proved, and ends `BenchmarkUnobserved` when nothing can be collected.
 * An operator's cancel also stops the batch, which then returns normally: that is a cancellation, never a verdict.
 */
export async function benchmarkAgainstTimer(
  runBenchmark: (batch: BenchmarkInput) => Promise<BenchmarkReport>,
  batch: BenchmarkInput,
  deadline: DeadlineWatch,
): Promise<BenchmarkReport> {
  const report = await raceTimer(runBenchmark, batch, deadline);
  if (CancellationScope.current().consideredCancelled) throw new CancelledFailure('cancelled during benchmark');
  return report;
}

/** A timer in its own scope, settled 'fired' or 'cancelled', for racing against the batch. */
function timerIn(scope: CancellationScope, ms: number, summary: string): Promise<'fired' | 'cancelled'> {
  return scope
    .run(() => sleep(ms, { summary }))
    .then(
      () => 'fired' as const,
      () => 'cancelled' as const,
    );
}

async function raceTimer(
  runBenchmark: (batch: BenchmarkInput) => Promise<BenchmarkReport>,
  batchInput: BenchmarkInput,
  w: DeadlineWatch,
): Promise<BenchmarkReport> {
  const { count, concurrency } = batchInput;
  const batchScope = new CancellationScope();
  const timerScope = new CancellationScope();
  const dueAtMs = Date.now() + w.benchmarkSec * 1000;
  const batch = batchScope.run(() => runBenchmark(batchInput));
  // Shown in real time: the timer runs on the lifecycle's clock (policy/clock.ts).
  const timer = timerIn(
    timerScope,
    w.benchmarkSec * 1000,
    `benchmark deadline (${realDuration(w.benchmarkSec, w.clock)})`,
  );
  let unheard: UnheardDeadline | null = null;
  try {
    const first = await Promise.race([batch.then(() => 'batch' as const), timer]);
    if (first === 'batch') return await batch;
    unheard = unheardDeadline({
      dueAtMs,
      firedAtMs: Date.now(),
      unheardSinceMs: w.unheardSince(),
      heartbeatSec: w.heartbeatSec,
      deadlineSec: w.benchmarkSec,
      clock: w.clock,
    });
    if (unheard) {
      w.onUnheard(unheard);
      const extension = timerIn(
        timerScope,
        unheard.extendSec * 1000,
        `listening for the host's kept batch (${realDuration(unheard.extendSec, w.clock)})`,
      );
      const settled = batch.then(
        () => 'batch' as const,
        () => 'batch' as const,
      );
      if ((await Promise.race([settled, extension])) === 'batch') return await batch;
    }
    batchScope.cancel();
    return await batch;
  } catch (err) {
    const ours = !CancellationScope.current().consideredCancelled;
    // Nothing the host proved could be collected after a deadline we did not hear: no evidence either way.
    if (unheard && ours && (isCancellation(err) || hostTimedOut(err))) throw unobserved(unheard, count, err, w.clock);
    // The host acknowledged our cancel without a report: a timeout with unknown progress.
    if (isCancellation(err) && batchScope.consideredCancelled && ours) {
      return {
        requested: count,
        completed: 0,
        elapsedMs: w.benchmarkSec * 1000,
        concurrency,
        timings: [],
        deadlineReached: true,
      };
    }
    throw err;
  } finally {
    timerScope.cancel();
  }
}

function unobserved(u: UnheardDeadline, requested: number, err: unknown, clock: Clock): ApplicationFailure {
  const real = (clockSec: number) => realSec(clockSec * 1000, clock);
  return killFailure(
    FailureType.BenchmarkUnobserved,
    `the benchmark deadline passed while we could not hear the host (${u.why}), and its kept batch could not be collected: no evidence against the host`,
    {
      lateSec: real(u.lateSec),
      unheardSec: u.unheardSec === null ? null : real(u.unheardSec),
      listenedSec: real(u.extendSec),
      requested,
      lastError: err instanceof Error ? err.message.slice(0, 300) : String(err),
    },
  );
}
