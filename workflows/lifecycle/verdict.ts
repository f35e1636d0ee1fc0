import type { ApplicationFailure } from '@temporalio/workflow';
import { realDuration } from '../domain/policy/clock.js';
import { killFailure } from '../classify.js';
import { FailureType } from '../domain/failures.js';
import { earlyPromoteReason } from '../domain/policy/early-promote-plan.js';
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
  | { promote: string; restartDaemonFirst: boolean };

/**
 * The verdict on a benchmark: killed when the timer fired, when the host gave up on reaching minRate, or
 * when the rate is under it; promoted otherwise, or when an operator overrode the last two.
 */
export function judge(
  report: BenchmarkReport,
  rate: number,
  input: LifecycleInput,
  override: PromoteOverride | null,
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
