import type { ApplicationFailure } from '@temporalio/workflow';
import { realDuration } from '../domain/policy/clock.js';
import { killFailure } from '../classify.js';
import { FailureType } from '../domain/failures.js';
import { earlyPromoteReason } from '../domain/policy/early-promote-plan.js';
import { fastestOf, sustainableRate } from '../domain/policy/early-stop.js';
import { expectedBatchMs, judgeRate } from '../domain/policy/rate.js';
import type { BenchmarkReport, EarlyStopEvidence, LifecycleInput } from '../domain/types.js';
import { earlyStopCause } from '../ui/kill-report.js';

export interface PromoteOverride {
  operator: string;
  reason: string;
}

export type Verdict =
  | { kill: ApplicationFailure }
  /** `restartDaemonFirst`: the host gave up on the batch, which also stopped its daemon. */
  | {
      promote: string;
      restartDaemonFirst: boolean;
      /**
       * Set when the batch's rate is under minRate only for filling the host's pipeline: the rate it sustains
       * once full, which keep by the dollar judges it at (too dear even then: `PricedOut`, nothing marked).
       */
      keepAtRate?: number;
    };

/**
 * The verdict on a benchmark: killed when the timer fired, when the host gave up on reaching minRate, or
 * when the rate is under it (and not only for filling the host's pipeline); promoted otherwise, or when an
 * operator overrode the last two.
 */
export function judge(
  report: BenchmarkReport,
  rate: number,
  input: LifecycleInput,
  override: PromoteOverride | null,
  /** The host's GPUs, for their ceiling on the rate it could sustain (0 when unknown: no ceiling). */
  gpus = 0,
): Verdict {
  const { minRate } = input;
  if (report.deadlineReached) {
    const within = realDuration(input.timeouts.benchmarkSec, input.clock);
    return {
      kill: killFailure(
        FailureType.BenchmarkTimeout,
        `benchmark did not finish within ${within} (${report.completed}/${report.requested} proofs)`,
        {
          completed: report.completed,
          requested: report.requested,
          elapsedMs: report.elapsedMs,
          expectedMs: expectedBatchMs(report.requested, minRate),
          rate,
        },
      ),
    };
  }
  if (override) {
    return {
      promote: `operator override by ${override.operator}: ${override.reason}`,
      restartDaemonFirst: report.gaveUp !== undefined,
    };
  }
  if (report.gaveUp) return { kill: gaveUpFailure(report, report.gaveUp, rate, input) };
  // An early promotion stands on its bound, not on the stopped batch's own rate.
  if (report.promotedEarly) return { promote: earlyPromoteReason(report.promotedEarly), restartDaemonFirst: false };
  if (!judgeRate(rate, minRate).keep) {
    const best = sustainableBy(report, gpus);
    if (best !== null && best >= minRate) return unprovenSlow(rate, best, minRate);
    return {
      kill: killFailure(FailureType.BenchRateBelowMin, `${rate} proofs/h is below the minimum of ${minRate}`, {
        rate,
        minRate,
        timings: report.timings,
        elapsedMs: report.elapsedMs,
      }),
    };
  }
  return { promote: `${rate} proofs/h`, restartDaemonFirst: false };
}

/** The most the host could sustain by its batch, once its pipeline is full (policy/early-stop.ts). */
function sustainableBy(report: BenchmarkReport, gpus: number): number | null {
  if (report.timings.length === 0) return null;
  return sustainableRate({
    completed: report.completed,
    elapsedMs: report.elapsedMs,
    ...fastestOf(report.timings),
    gpus,
    concurrency: report.concurrency,
  });
}

/**
 * Only evidence against a host marks it: a batch under minRate only because it paid for filling the host's
 * pipeline, which production pays once, is no such evidence. Promoted, and judged by the dollar at the rate
 * it sustains (too dear even then: `PricedOut`, nothing marked); production's watch measures it from there.
 */
function unprovenSlow(rate: number, best: number, minRate: number): Verdict {
  const bestText = Math.round(best * 100) / 100;
  return {
    promote:
      `${rate} proofs/h over the batch is under the minimum of ${minRate} only for filling its pipeline: ` +
      `${bestText} proofs/h once full, no evidence the host is slow`,
    restartDaemonFirst: false,
    keepAtRate: best,
  };
}

/** The host's early stop, phrased from the evidence it decided on. */
function gaveUpFailure(
  report: BenchmarkReport,
  evidence: EarlyStopEvidence,
  rate: number,
  input: LifecycleInput,
): ApplicationFailure {
  const ceiling = evidence.gpuCeilingRate;
  return killFailure(
    FailureType.BenchRateBelowMin,
    earlyStopCause({
      completed: report.completed,
      requested: report.requested,
      gpus: evidence.gpus,
      gpuCeilingRate: evidence.bound === 'gpu-ceiling' ? ceiling : null,
      bestRate: evidence.bestRate,
      minRate: input.minRate,
    }),
    {
      rate,
      minRate: input.minRate,
      earlyStop: true,
      gpuCeilingRate: ceiling,
      timings: report.timings,
      elapsedMs: report.elapsedMs,
    },
  );
}
