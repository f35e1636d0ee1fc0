import { FailureType } from '../../../workflows/domain/failures.js';
import type { BenchmarkPlan } from '../../../workflows/domain/policy/concurrency.js';
import type { Standing } from '../../../workflows/domain/policy/early-promote-plan.js';
import type { LifecycleInput } from '../../../workflows/domain/types.js';
import { proofPhasesSec } from '../../sim/cuzk/timing-model.js';
import type { MarketOffer } from '../market.js';
import { type BenchmarkOutcome, runBatch } from './batch.js';

/**
 * Real-world seconds the simulators leave out but a real rental spends (a create call, the host's worker
 * connecting, the fitness gate's probes, a destroy), and the scaler's wait for a taken offer. Chosen from
 * the reference and measurements, never fitted to a bench result: docs/benchmarks.md, "The policy evaluator".
 */
export interface Latencies {
  rentSec: number;
  hostConnectSec: number;
  fitnessSec: number;
  destroySec: number;
  /** The production schedule's `offerCheckSec` (gpu-fleet schedule setup). */
  offerCheckSec: number;
}

export const REAL_LATENCIES: Latencies = {
  rentSec: 5,
  hostConnectSec: 10,
  // docs/benchmarks.md, "The fitness gate's cost": 1.8-4.4 s measured on a loaded machine.
  fitnessSec: 3,
  destroySec: 2,
  offerCheckSec: 120,
};

/** How a rental ends, and when (seconds into the day). */
export interface Ending {
  atSec: number;
  failureType: FailureType;
}

/** The rental up to its timed benchmark: it ended on the way, or it is ready to benchmark. */
export type BootCourse =
  { runningAtSec: number | null; end: Ending } | { runningAtSec: number; benchmarkAtSec: number; end?: undefined };

/** When the host dies under a preemption (seconds into the day), Infinity if never. */
export function lostAtSec(m: MarketOffer, runningAtSec: number): number {
  const after = m.offer.sim.instance.preemptAfterSec;
  return after === undefined ? Infinity : runningAtSec + after;
}

/**
 * A rental from its create call to the start of its timed benchmark, in the simulator's fault and timing
 * models (infra/sim/vast/server.ts, infra/sim/cuzk/engine.ts, infra/sim/fetch-params.ts) and the
 * lifecycle's runbook (workflows/instance-lifecycle.ts, lifecycle/warmup.ts, lifecycle/host-steps.ts).
 * A preempted host is lost: the step in flight times out on its heartbeat (HostLost).
 */
export function bootCourse(
  m: MarketOffer,
  createdAtSec: number,
  input: LifecycleInput,
  plan: BenchmarkPlan,
  lat: Latencies,
): BootCourse {
  const inst = m.offer.sim.instance;
  const t = input.timeouts;
  if (inst.fate === 'stuck_loading')
    return { runningAtSec: null, end: { atSec: createdAtSec + t.waitRunningSec, failureType: 'InstanceNeverRunning' } };
  if (inst.fate !== 'running')
    return { runningAtSec: null, end: { atSec: createdAtSec + inst.loadingSec, failureType: 'InstanceNeverRunning' } };
  const running = createdAtSec + inst.loadingSec;
  const lost = lostAtSec(m, running);
  const course = warmedUpAt(m, running + lat.hostConnectSec + lat.fitnessSec, input, plan);
  const endAt = 'failureType' in course ? course.atSec : course.readyAtSec;
  if (endAt > lost) return { runningAtSec: running, end: { atSec: lost + t.heartbeatSec, failureType: 'HostLost' } };
  if ('failureType' in course) return { runningAtSec: running, end: course };
  return { runningAtSec: running, benchmarkAtSec: course.readyAtSec };
}

/** Paramfetch, the warm-up proof, the restart with full partition workers and the post-restart warm-up. */
function warmedUpAt(
  m: MarketOffer,
  fromSec: number,
  input: LifecycleInput,
  plan: BenchmarkPlan,
): Ending | { readyAtSec: number } {
  const host = m.offer.sim.host;
  const t = input.timeouts;
  const fetch = host.faults.paramfetch;
  // The simulated fetch stalls after 3 of its 10 steps and fails at its 4th (fetch-params.ts).
  if (fetch === 'stall')
    return { atSec: fromSec + 0.3 * host.paramfetchSec + t.paramfetchStallSec, failureType: 'ParamfetchFailed' };
  if (fetch === 'fail') return { atSec: fromSec + 0.4 * host.paramfetchSec, failureType: 'ParamfetchFailed' };
  const s = { at: fromSec + host.paramfetchSec, pce: false, drops: host.faults.transportDrops };
  let restarts = input.transportErrorRestarts;
  /** A daemon start and its first proof; a dropped stream restarts the daemon (transportErrorRestarts). */
  const warm = (workers: number): Ending | null => {
    for (;;) {
      s.at += host.startupSec;
      const oom = host.faults.oomOnPceAbovePartitionWorkers;
      if (!s.pce && oom !== undefined && workers > oom)
        return { atSec: s.at + host.pceExtractSec / 2, failureType: 'DaemonOOM' };
      const { synthSec, gpuSec } = proofPhasesSec(host.proofSec, workers);
      const synth = synthSec + host.firstProofAfterRestartExtraSec + (s.pce ? 0 : host.pceExtractSec);
      if (s.drops > 0) {
        s.drops--;
        s.at += synth / 2;
        if (restarts-- <= 0) return { atSec: s.at, failureType: 'DaemonTransportError' };
        continue;
      }
      if (synth + gpuSec > t.proofDeadlineSec)
        return { atSec: s.at + t.proofDeadlineSec, failureType: 'ProofDeadlineExceeded' };
      s.at += synth + gpuSec;
      s.pce = true;
      return null;
    }
  };
  const first = warm(plan.warmupPartitionWorkers);
  if (first) return first;
  if (plan.partitionWorkers !== plan.warmupPartitionWorkers) {
    const second = warm(plan.partitionWorkers);
    if (second) return second;
  }
  return { readyAtSec: s.at };
}

/** The timed benchmark from `startSec`, with a preemption during it turned into HostLost. */
export function benchmarkCourse(
  m: MarketOffer,
  runningAtSec: number,
  startSec: number,
  input: LifecycleInput,
  plan: BenchmarkPlan,
  standing: Standing,
): BenchmarkOutcome {
  const out = runBatch(m, startSec, input, plan, standing);
  const lost = lostAtSec(m, runningAtSec);
  if (out.atSec > lost) return { atSec: lost + input.timeouts.heartbeatSec, failureType: FailureType.HostLost };
  return out;
}
