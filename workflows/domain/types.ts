import type { FailureType } from './failures.js';
import type { EarlyPromoteEvidence } from './policy/early-promote.js';
import type { Confidence } from './policy/student-t.js';
import type { BenchInputPolicy, BenchInputRequest, FitnessPolicy, FitnessRequest } from './policy/fitness.js';
import type { Clock } from './policy/clock.js';
import type { CostFigures, CostLedger } from './policy/cost.js';

/** Stages a lifecycle passes through, in order; also the LifecycleStage search attribute. */
export const STAGES = [
  'provisioning',
  'waiting_running',
  'fitness',
  'paramfetch',
  'warmup',
  'restart',
  'post_restart_warmup',
  'benchmark',
  'evaluating',
  'promoted',
  'killing',
  'killed',
] as const;
export type Stage = (typeof STAGES)[number];

/** All durations are seconds, so tests and the demo can compress time through input alone. */
export interface LifecycleTimeouts {
  waitRunningSec: number;
  hostConnectSec: number;
  paramfetchSec: number;
  paramfetchStallSec: number;
  daemonReadySec: number;
  proofDeadlineSec: number;
  benchmarkSec: number;
  heartbeatSec: number;
  /** How long a store call retries inside its activity before the workflow waits on timers. */
  storeRetrySec: number;
}

export interface ConcurrencyRule {
  minConcurrency: number;
  maxConcurrency: number;
  proofsPerGpu: number;
  ramGiBPerProof: number;
  ramGiBPerPartitionWorker: number;
  maxPartitionWorkers: number;
  warmupPartitionWorkers: number;
}

/** How a promoted instance keeps being watched (all seconds / proofs per hour / $ per hour). */
export interface WatchPolicy {
  intervalSec: number;
  /** Kill when the windowed rate stays under this (default: 80 % of minRate). */
  floorRate: number | null;
  /** The rate is measured over this many intervals: one interval holds too few proofs to judge. */
  windowSamples: number;
  /** Consecutive low samples before a kill, so one slow window does not kill a good host. */
  degradedSamples: number;
  /** Kill when the instance's price rises above this (default: rented price + 20 %). */
  maxDph: number | null;
  /** Samples per workflow run before continue-as-new keeps history small. */
  samplesPerRun: number;
  /**
   * How long Vast may stay unreadable (outage, garbled answers) while a watched host keeps proving before
   * the lifecycle gives up on knowing its price and state; an outage shorter than this is waited out.
   */
  vastPatienceSec: number;
}

/** Carried through continue-as-new while a promoted instance is watched. */
export interface ResumeState {
  /** The rental this run continues. */
  rentalKey: string;
  rented: RentedInstance;
  seq: number;
  benchRate: number | null;
  /** Daemon counter samples of the current rate window, oldest first. */
  points: Array<{ completed: number; at: number }>;
  lowSamples: number;
  /** Epoch ms since which Vast could not be read (null: it answered last time). */
  vastUnreadableSince: number | null;
  /** Epoch ms of the rent, for the cost so far (absent in runs continued before it was carried). */
  rentedAtMs?: number;
  /** What the rental has cost so far (absent in runs continued before costs were kept). */
  cost?: CostLedger;
}

/** How an interruptible rental bids (all $/h for the machine's compute, as Vast's `price` is). */
export interface BidPolicy {
  /** Bid this far above the offer's `min_bid`, in percent (10 = min_bid × 1.10). */
  marginPct: number;
  /** Never bid above this; Vast would then stop the instance for a higher bid (Preempted) or refuse it (BidTooLow). */
  maxBidDph: number;
  /** Create attempts at a higher bid after Vast says a bid is too low, before BidTooLow. */
  rebids: number;
}

/** Evidence of an interruptible rental: the bids placed and the `min_bid` Vast showed, oldest first (bounded). */
export interface BidHistory {
  bids: Array<{ at: string; priceDph: number; minBidDph: number | null; why: 'rent' | 'rebid-at-create' | 'raise' }>;
  prices: Array<{ at: string; minBidDph: number | null; status: string | null }>;
}

/** What a rental bid, when it is interruptible (absent: on-demand). */
export interface RentedBid {
  /** The bid in force ($/h, Vast's `price`). */
  priceDph: number;
  /** The bid placed at rent ($/h): `offer.dphTotal` was billed at it, so a raise adds the difference. */
  atRentDph: number;
  policy: BidPolicy;
  history: BidHistory;
}

export interface LifecycleInput {
  offerId: number;
  /** Keep/kill bar in proofs per hour. */
  minRate: number;
  benchmarkProofs: number;
  image: string;
  diskGb: number;
  timeouts: LifecycleTimeouts;
  concurrency: ConcurrencyRule;
  /** How many times a daemon transport error is answered by a restart before it is a failure. */
  transportErrorRestarts: number;
  /** Stop a benchmark as soon as even the best case cannot reach minRate (after this many proofs; 0 = never). */
  earlyStopAfterProofs: number;
  watch: WatchPolicy;
  verdicts: VerdictPolicy;
  /** The fitness gate's thresholds (workflows/domain/policy/fitness.ts). */
  fitness: FitnessPolicy;
  /** Where the benchmark's C1 input comes from when the image lacks it. */
  benchInput: BenchInputPolicy;
  /** Rent as an interruptible instance with this bid policy (absent: on-demand). */
  bid?: BidPolicy;
  /**
   * The fleet's target (proofs/h) when the scaler started this rental: a host over minRate is then kept by
   * the dollar against what the target costs per proof (policy/keep-by-dollar.ts). Absent for an
   * operator's deploy: minRate alone.
   */
  fleetTargetRate?: number;
  /**
   * Whether the control worker has a webhook to tell (NOTIFY_WEBHOOK_URL), said by whoever starts the
   * lifecycle: false runs no notify step at all (default true: the step runs and is a no-op without one).
   */
  notify: boolean;
  /**
   * The lifecycle's clock against real time (policy/clock.ts): real time in production, compressed
   * against the simulators. Durations in `timeouts`/`watch` are on it; minRate and every rate, duration
   * and cost the lifecycle reports are real.
   */
  clock: Clock;
  resume?: ResumeState;
}

/** Early promote and reputation (docs/operating.md, "Verdicts and reputation"). */
export interface VerdictPolicy {
  /** Promote a batch as soon as a pessimistic finish still reaches minRate (off: always the full batch). */
  earlyPromote: boolean;
  /** Confidence of the early-promote bound: 0.9, 0.95 or 0.99. */
  confidence: Confidence;
  /** Seconds a first mark for a repeated transient cause lasts; doubled per further strike. */
  transientMarkSec: number;
  /**
   * minRate is an operator's override for this deploy (`deploy --min-rate`), not the fleet's bar: a kill
   * judged against it (BenchRateBelowMin, RateDegraded) judges the rental and marks nothing.
   */
  operatorBar?: boolean;
}

/** What callers pass: only the offer is required, the rest has production defaults. */
export type LifecycleRequest = { offerId: number } & Partial<
  Omit<LifecycleInput, 'offerId' | 'timeouts' | 'concurrency' | 'watch' | 'verdicts' | 'fitness' | 'benchInput'>
> & {
    timeouts?: Partial<LifecycleTimeouts>;
    concurrency?: Partial<ConcurrencyRule>;
    watch?: Partial<WatchPolicy>;
    verdicts?: Partial<VerdictPolicy>;
    fitness?: FitnessRequest;
    benchInput?: BenchInputRequest;
  };

/** The offer facts the workflow plans with (RAM in MB, as Vast reports it). */
export interface OfferFacts {
  offerId: number;
  machineId: number;
  hostId: number;
  gpuName: string;
  numGpus: number;
  /** VRAM per GPU in MB as the offer claims it (gpu_ram); absent for facts read back from an instance. */
  gpuRamMb?: number;
  cpuRamMb: number;
  /**
   * $/h this rental pays, storage for the disk we rent included. Before renting: Vast's search price
   * with `allocated_storage` = our disk. Once rented: the `dph_total` Vast bills on the instance.
   */
  dphTotal: number;
  /** $/h the offer search quoted for our disk; kept beside the billed price as evidence. */
  searchedDph?: number;
  /** Vast's storage price in $/GB/month (storage $/h = GB × storage_cost / 720); null when Vast did not say. */
  storageCost?: number | null;
  /** The lowest interruptible bid Vast showed for this offer ($/h); null or absent when it did not say. */
  minBid?: number | null;
}

export interface RentedInstance {
  instanceId: number;
  /** `dphTotal` is what Vast bills: for an interruptible rental, the bid paid plus storage. */
  offer: OfferFacts;
  /** Set when rented as an interruptible instance. */
  bid?: RentedBid;
  /**
   * When the server stops accepting the host's per-rental token (ISO, wall time); absent without a token
   * key. Not secret: the token itself stays in the instance's env. The watch retires the host before it.
   */
  hostTokenExpiresAt?: string;
}

export interface ProofTiming {
  index: number;
  totalMs: number;
  synthesisMs: number;
  gpuComputeMs: number;
}

export interface BenchmarkReport {
  requested: number;
  completed: number;
  elapsedMs: number;
  concurrency: number;
  timings: ProofTiming[];
  /** True when the workflow's benchmark timer fired and cancelled the batch before it finished. */
  deadlineReached: boolean;
  /** Set when the host gave up on the batch because even its best case could not reach minRate: why. */
  gaveUp?: EarlyStopEvidence;
  /** Set when the host stopped the batch because even a pessimistic finish reaches minRate: the evidence. */
  promotedEarly?: EarlyPromoteEvidence;
}

/** The evidence the host's early-stop policy decided on (workflows/domain/policy/early-stop.ts). */
export interface EarlyStopEvidence {
  /** The bound that fell short: the GPUs' ceiling (GPUs / fastest GPU time) or the best pace seen. */
  bound: 'gpu-ceiling' | 'best-pace';
  /** Proofs per hour that bound allows, under minRate. */
  bestRate: number;
  /** Proofs per hour the GPUs could sustain if they never idled; null when GPU time is unknown. */
  gpuCeilingRate: number | null;
  /** GPUs the ceiling was computed for. */
  gpus: number;
  completed: number;
  requested: number;
}

export interface BenchmarkProgress {
  completed: number;
  requested: number;
  elapsedMs: number;
}

/** Sent by the host's benchmark after each proof (benchmarkProgressSignal); stepId names the batch. */
export interface BenchmarkProgressReport extends BenchmarkProgress {
  stepId?: string;
}

export type Outcome = 'promoted' | 'killed';

export interface LifecycleResult {
  workflowId: string;
  outcome: Outcome;
  offerId: number;
  instanceId: number | null;
  machineId: number | null;
  gpuName: string | null;
  rate: number | null;
  failureType: FailureType | null;
  reason: string;
  /** What the rental cost up to this result (null when nothing was rented; absent in old results). */
  cost?: CostFigures | null;
}

export interface LifecycleStatus {
  stage: Stage;
  offerId: number;
  /** This rental's key: its records, label and host queue derive from it. */
  rentalKey: string;
  /** Which rental of this offer (1 for the first); null until read from the store, or if it could not be. */
  rentalNumber: number | null;
  instanceId: number | null;
  gpuName: string | null;
  benchmark: BenchmarkProgress | null;
  rate: number | null;
  startedAt: string;
  stageDeadline: string | null;
  failureType: FailureType | null;
  /** Once killed: the one-line cause ("killed by alice: host too hot", "rate 31 proofs/h under the bar …"). */
  cause: string | null;
  /** Set while a watched instance's Vast reads fail: since when, and the last error (no evidence about the host). */
  vastUnreadable?: { since: string; lastError: string } | null;
  /** Set while a write the lifecycle needs waits for our own database (Postgres down): not the host's fault. */
  waitingOn?: StoreWait | null;
  /** True while the benchmark runs on a machine back from an expired mark (no early promote). */
  probation?: boolean;
  /** The clock the lifecycle converts with (LifecycleInput.clock): a reader converts its own ages with it. */
  clock: Clock;
  /** Cost up to the workflow's last step; `costLedger` lets a reader count on to its own now (policy/cost.ts). */
  cost?: CostFigures | null;
  costLedger?: CostLedger | null;
}

export interface StoreWait {
  what: 'store';
  write: string;
  since: string;
  attempts: number;
  lastError: string;
}
