import type { FailureType } from '../../../workflows/domain/failures.js';
import type { BenchmarkPlan } from '../../../workflows/domain/policy/concurrency.js';
import { benchRate, type Standing } from '../../../workflows/domain/policy/early-promote-plan.js';
import { earlyPromoteEvidence } from '../../../workflows/domain/policy/early-promote.js';
import { earlyStopEvidence } from '../../../workflows/domain/policy/early-stop.js';
import type { BenchmarkReport, ProofTiming } from '../../../workflows/domain/types.js';
import type { LifecycleInput } from '../../../workflows/domain/types.js';
import { batchFor } from '../../../workflows/lifecycle/benchmark.js';
import { judge } from '../../../workflows/lifecycle/verdict.js';
import { simulateBatch, type SimulatedProof } from '../../sim/cuzk/timing-model.js';
import type { MarketOffer } from '../market.js';

/**
 * How a timed benchmark ends: with a report the workflow judged (a rate for the store, and promote or
 * the kill's type), or with a failure before any report (a crash, a proof past its deadline, a lost host).
 */
export type BenchmarkOutcome =
  | { atSec: number; failureType: FailureType; report?: undefined }
  | {
      atSec: number;
      report: BenchmarkReport;
      rate: number;
      /** The rate keep by the dollar judges it at (the verdict's `keepAtRate`, else `rate`). */
      keepRate: number;
      failureType: FailureType | null;
      benchCompleted: number;
    };

const timing = (p: SimulatedProof): ProofTiming => ({
  index: p.index,
  totalMs: p.totalSec * 1000,
  synthesisMs: (p.totalSec - p.gpuSec) * 1000,
  gpuComputeMs: p.gpuSec * 1000,
});

/**
 * One batch as the host runs it (activities/gpu-host/benchmark.ts runBenchmark: after each completion
 * early stop is asked, then early promote) against the workflow's timer, proof times from the simulator's
 * timing model, the daemon's crash fault counted as the engine counts it (completions since its start,
 * the post-restart warm-up's included). The verdict is the workflow's own `judge`.
 */
export function runBatch(
  m: MarketOffer,
  startSec: number,
  input: LifecycleInput,
  plan: BenchmarkPlan,
  standing: Standing,
): BenchmarkOutcome {
  const gpus = m.offer.num_gpus;
  const batch = batchFor(input, plan, gpus, false, standing);
  const proofs = simulateBatch({
    proofSec: m.offer.sim.host.proofSec,
    gpus,
    partitionWorkers: plan.partitionWorkers,
    concurrency: batch.concurrency,
    count: batch.count,
  });
  const late = proofs.filter((p) => p.totalSec > batch.proofDeadlineSec);
  const deadlineSec = Math.min(Infinity, ...late.map((p) => p.startSec + batch.proofDeadlineSec));
  const timerSec = input.timeouts.benchmarkSec;
  const crashAfter = m.offer.sim.host.faults.crashAfterProofs;
  const done: SimulatedProof[] = [];
  const judged = (report: BenchmarkReport): BenchmarkOutcome => {
    const rate = benchRate(report);
    const v = judge(report, rate, input, null, gpus);
    const failureType = 'kill' in v ? (v.kill.type as FailureType) : null;
    const keepRate = ('promote' in v ? v.keepAtRate : undefined) ?? rate;
    const atSec = startSec + report.elapsedMs / 1000;
    return { atSec, report, rate, keepRate, failureType, benchCompleted: report.completed };
  };
  const base = { requested: batch.count, concurrency: batch.concurrency, deadlineReached: false };
  const reportAt = (sec: number) => ({
    ...base,
    completed: done.length,
    elapsedMs: sec * 1000,
    timings: done.map(timing).sort((a, b) => a.index - b.index),
  });
  for (const p of proofs) {
    if (Math.min(timerSec, deadlineSec) < p.endSec) {
      if (timerSec <= deadlineSec) return judged({ ...reportAt(timerSec), deadlineReached: true });
      return { atSec: startSec + deadlineSec, failureType: 'ProofDeadlineExceeded' };
    }
    // The engine dies once its completions pass crashAfterProofs; the post-restart warm-up was its first.
    if (crashAfter !== undefined && 1 + done.length + 1 > crashAfter)
      return { atSec: startSec + p.endSec, failureType: 'DaemonCrashed' };
    done.push(p);
    const evidence = afterCompletion(batch, done, proofs, p.endSec);
    if (evidence) return judged({ ...reportAt(p.endSec), ...evidence });
  }
  return judged(reportAt(done[done.length - 1]?.endSec ?? 0));
}

/** The host's two questions after a completion: give up (early stop), then promote early. */
function afterCompletion(
  batch: ReturnType<typeof batchFor>,
  done: readonly SimulatedProof[],
  all: readonly SimulatedProof[],
  nowSec: number,
): Pick<BenchmarkReport, 'gaveUp' | 'promotedEarly'> | null {
  const elapsedMs = nowSec * 1000;
  if (batch.earlyStop) {
    const gaveUp = earlyStopEvidence({
      completed: done.length,
      requested: batch.count,
      elapsedMs,
      fastestProofMs: Math.min(...done.map((p) => p.totalSec * 1000)),
      fastestGpuMs: Math.min(...done.map((p) => p.gpuSec * 1000)),
      gpus: batch.earlyStop.gpus ?? 0,
      concurrency: batch.concurrency,
      minRate: batch.earlyStop.minRate,
      minProofs: batch.earlyStop.minProofs,
    });
    if (gaveUp) return { gaveUp };
  }
  if (!batch.earlyPromote) return null;
  const inFlight = all.filter((p) => p.startSec < nowSec && p.endSec > nowSec).map((p) => p.startSec * 1000);
  const promotedEarly = earlyPromoteEvidence({
    totalsMs: done.map((p) => p.totalSec * 1000),
    requested: batch.count,
    elapsedMs,
    concurrency: batch.concurrency,
    inFlightStartedMs: inFlight,
    ...batch.earlyPromote,
  });
  return promotedEarly ? { promotedEarly } : null;
}
