import { validateBidPolicy } from './bid.js';
import { clockOf, REAL_TIME } from './clock.js';
import type {
  ConcurrencyRule,
  LifecycleInput,
  LifecycleRequest,
  LifecycleTimeouts,
  VerdictPolicy,
  WatchPolicy,
} from '../types.js';
import { isConfidence } from './student-t.js';
import { TRANSIENT_MARK_SEC } from './verdicts.js';
import { resolveFitness } from './fitness.js';

/**
 * The keep/kill bar in real proofs/h: 29.0 was the bar in use in the operating history. The one default
 * for the lifecycle, the scaler, the CLI, the demo and the bench.
 */
export const DEFAULT_MIN_RATE = 29;

/** Production defaults, taken from the operating history: 45-minute benchmark, 12 proofs. */
export const DEFAULT_TIMEOUTS: LifecycleTimeouts = {
  waitRunningSec: 20 * 60,
  hostConnectSec: 10 * 60,
  paramfetchSec: 60 * 60,
  paramfetchStallSec: 5 * 60,
  daemonReadySec: 5 * 60,
  // The first proof after a restart took 2-3 min of synthesis alone; a short deadline was the bug in the operating history.
  proofDeadlineSec: 20 * 60,
  benchmarkSec: 45 * 60,
  heartbeatSec: 60,
  storeRetrySec: 10,
};

export const DEFAULT_CONCURRENCY: ConcurrencyRule = {
  minConcurrency: 2,
  maxConcurrency: 6,
  proofsPerGpu: 3,
  ramGiBPerProof: 100,
  ramGiBPerPartitionWorker: 25,
  maxPartitionWorkers: 16,
  warmupPartitionWorkers: 2,
};

export const DEFAULT_WATCH: WatchPolicy = {
  intervalSec: 5 * 60,
  floorRate: null,
  windowSamples: 6,
  degradedSamples: 2,
  maxDph: null,
  samplesPerRun: 200,
  // Half an hour without knowing what Vast bills, at most: a Vast outage is waited out up to then.
  vastPatienceSec: 30 * 60,
};

export const DEFAULT_VERDICTS: VerdictPolicy = {
  earlyPromote: true,
  confidence: 0.95,
  transientMarkSec: TRANSIENT_MARK_SEC,
};

/** GiB of disk a lifecycle rents (parameters ~100 GiB, PCE cache, work dir); Vast prices storage on it. */
export const DEFAULT_DISK_GB = 200;

export const DEFAULT_IMAGE = 'ghcr.io/gpu-fleet/gpu-host:latest';

export function withDefaults(req: LifecycleRequest): LifecycleInput {
  if (!Number.isInteger(req.offerId) || req.offerId <= 0) {
    throw new RangeError(`offerId must be a positive integer, got ${String(req.offerId)}`);
  }
  const input: LifecycleInput = {
    offerId: req.offerId,
    minRate: req.minRate ?? DEFAULT_MIN_RATE,
    benchmarkProofs: req.benchmarkProofs ?? 12,
    image: req.image ?? DEFAULT_IMAGE,
    diskGb: req.diskGb ?? DEFAULT_DISK_GB,
    transportErrorRestarts: req.transportErrorRestarts ?? 1,
    earlyStopAfterProofs: req.earlyStopAfterProofs ?? 3,
    timeouts: { ...DEFAULT_TIMEOUTS, ...req.timeouts },
    concurrency: { ...DEFAULT_CONCURRENCY, ...req.concurrency },
    watch: { ...DEFAULT_WATCH, ...req.watch },
    verdicts: { ...DEFAULT_VERDICTS, ...req.verdicts },
    ...resolveFitness(req.fitness, req.benchInput),
    ...(req.bid ? { bid: req.bid } : {}),
    ...(req.fleetTargetRate !== undefined ? { fleetTargetRate: req.fleetTargetRate } : {}),
    notify: req.notify ?? true,
    clock: clockOf((req.clock ?? REAL_TIME).scale),
    ...(req.resume ? { resume: req.resume } : {}),
  };
  if (!(input.watch.intervalSec > 0))
    throw new RangeError(`watch.intervalSec must be > 0, got ${input.watch.intervalSec}`);
  // Vast's create rejects less than 8 GB, and storage is priced on this figure.
  if (!(input.diskGb >= 8)) throw new RangeError(`diskGb must be >= 8 (GB), got ${input.diskGb}`);
  if (input.bid) validateBidPolicy(input.bid);
  if (!(input.minRate >= 0)) throw new RangeError(`minRate must be >= 0, got ${input.minRate}`);
  if (input.fleetTargetRate !== undefined && !(input.fleetTargetRate > 0))
    throw new RangeError(`fleetTargetRate must be > 0, got ${input.fleetTargetRate}`);
  if (!Number.isInteger(input.benchmarkProofs) || input.benchmarkProofs < 1) {
    throw new RangeError(`benchmarkProofs must be a positive integer, got ${input.benchmarkProofs}`);
  }
  if (!isConfidence(input.verdicts.confidence)) {
    throw new RangeError(`verdicts.confidence must be 0.9, 0.95 or 0.99, got ${String(input.verdicts.confidence)}`);
  }
  if (!(input.verdicts.transientMarkSec > 0)) {
    throw new RangeError(`verdicts.transientMarkSec must be > 0, got ${input.verdicts.transientMarkSec}`);
  }
  for (const [name, value] of Object.entries(input.timeouts)) {
    if (!(typeof value === 'number' && value > 0)) throw new RangeError(`timeouts.${name} must be > 0, got ${value}`);
  }
  return input;
}
