import { CancellationScope, CancelledFailure, isCancellation, sleep } from '@temporalio/workflow';
import type { BenchmarkInput } from '../../activities/gpu-host/activities.js';
import { clockRate, formatDuration, realSec } from '../domain/policy/clock.js';
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
            minRate: clockRate(input.minRate, input.timeScale),
            minProofs: Math.max(input.earlyStopAfterProofs, plan.concurrency + 1),
            gpus,
          },
        }
      : {}),
    // Early promote's bar too, so its projected rate is judged on the clock it is measured on.
    ...(earlyPromote
      ? { earlyPromote: { ...earlyPromote, minRate: clockRate(earlyPromote.minRate, input.timeScale) } }
      : {}),
  };
}

/**
 * Races the batch against a workflow timer. On timeout the activity is cancelled and, because it waits
 * for cancellation to complete, hands back how far it got; that partial report is the timeout's evidence.
 * An operator's cancel also stops the batch, which then returns normally: that is a cancellation, never a verdict.
 */
export async function benchmarkAgainstTimer(
  runBenchmark: (batch: BenchmarkInput) => Promise<BenchmarkReport>,
  batch: BenchmarkInput,
  benchmarkSec: number,
  timeScale: number,
): Promise<BenchmarkReport> {
  const report = await raceTimer(runBenchmark, batch, benchmarkSec, timeScale);
  if (CancellationScope.current().consideredCancelled) throw new CancelledFailure('cancelled during benchmark');
  return report;
}

async function raceTimer(
  runBenchmark: (batch: BenchmarkInput) => Promise<BenchmarkReport>,
  batchInput: BenchmarkInput,
  benchmarkSec: number,
  timeScale: number,
): Promise<BenchmarkReport> {
  const { count, concurrency } = batchInput;
  const batchScope = new CancellationScope();
  const timerScope = new CancellationScope();
  const batch = batchScope.run(() => runBenchmark(batchInput));
  const timer = timerScope
    .run(() =>
      sleep(benchmarkSec * 1000, {
        // Shown in real time: the timer runs on the hosts' clock (policy/clock.ts).
        summary: `benchmark deadline (${formatDuration(realSec(benchmarkSec * 1000, timeScale))})`,
      }),
    )
    .then(
      () => 'timer' as const,
      () => 'cancelled' as const,
    );
  try {
    const first = await Promise.race([batch.then(() => 'batch' as const), timer]);
    if (first === 'batch') return await batch;
    batchScope.cancel();
    return await batch;
  } catch (err) {
    // The host acknowledged our cancel without a report: a timeout with unknown progress.
    if (isCancellation(err) && batchScope.consideredCancelled && !CancellationScope.current().consideredCancelled) {
      return {
        requested: count,
        completed: 0,
        elapsedMs: benchmarkSec * 1000,
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
