import type { FailureType } from './failures.js';

/** Stages a lifecycle passes through, in order; also the LifecycleStage search attribute. */
export const STAGES = [
  'provisioning',
  'waiting_running',
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
  /** How long a store write retries inside its local activity before the workflow waits on timers. */
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
  /** The rental this run continues (absent in runs continued by code from before rental keys). */
  rentalKey?: string;
  rented: RentedInstance;
  seq: number;
  benchRate: number | null;
  /** Daemon counter samples of the current rate window, oldest first. */
  points: Array<{ completed: number; at: number }>;
  lowSamples: number;
  /** Epoch ms since which Vast could not be read (null or absent: it answered last time). */
  vastUnreadableSince?: number | null;
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
  resume?: ResumeState;
}

/** What callers pass: only the offer is required, the rest has production defaults. */
export type LifecycleRequest = { offerId: number } & Partial<
  Omit<LifecycleInput, 'offerId' | 'timeouts' | 'concurrency' | 'watch'>
> & {
    timeouts?: Partial<LifecycleTimeouts>;
    concurrency?: Partial<ConcurrencyRule>;
    watch?: Partial<WatchPolicy>;
  };

/** The offer facts the workflow plans with (RAM in MB, as Vast reports it). */
export interface OfferFacts {
  offerId: number;
  machineId: number;
  hostId: number;
  gpuName: string;
  numGpus: number;
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
}

export interface RentedInstance {
  instanceId: number;
  offer: OfferFacts;
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
  /** True when the batch stopped because the workflow's timer fired. */
  stoppedEarly: boolean;
  /** True when the host stopped the batch because even its best pace could not reach minRate. */
  earlyStopped?: boolean;
}

export interface BenchmarkProgress {
  completed: number;
  requested: number;
  elapsedMs: number;
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
}

export interface LifecycleStatus {
  stage: Stage;
  offerId: number;
  /** This rental's key: its records, label and host queue derive from it. */
  rentalKey: string;
  instanceId: number | null;
  gpuName: string | null;
  benchmark: BenchmarkProgress | null;
  rate: number | null;
  startedAt: string;
  stageDeadline: string | null;
  failureType: FailureType | null;
  /** Set while a watched instance's Vast reads fail: since when, and the last error (no evidence about the host). */
  vastUnreadable?: { since: string; lastError: string } | null;
  /** Set while a write the lifecycle needs waits for our own database (Postgres down): not the host's fault. */
  waitingOn?: StoreWait | null;
}

export interface StoreWait {
  what: 'store';
  write: string;
  since: string;
  attempts: number;
  lastError: string;
}
