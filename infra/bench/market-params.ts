import { DEFAULT_DISK_GB, DEFAULT_MIN_RATE } from '../../workflows/domain/policy/defaults.js';
/**
 * The market of the market bench (`npm run bench -- --only market`), fixed before any policy is judged
 * against it. Every rate names where it comes from. Change a number only in a commit that says why.
 *
 * Sources: `seeds` = the operating history (../shared/seeds/); `cuzk.md`, `vast-api.md` = the reference;
 * `demo` = infra/sim/scenarios/demo.json (the seeds' seven machines). The seeds show seven machines, so
 * a rate "1 of 7" is a crude estimate; rates marked `assumption` have no measurement behind them.
 */
export interface Sourced<T> {
  value: T;
  source: string;
}

export interface GpuModelParams {
  /** Seconds per 32 GiB PoRep C2 on one GPU of this model on a host with >= 512 GiB RAM (sim `proofSec`). */
  proofSec: number;
  /** $/h per GPU as an 8 GiB search shows it (compute plus 8 GiB of storage). */
  dphPerGpu: number;
  /** Relative frequency among offers. */
  weight: number;
  gpuRamMb: number;
  source: string;
}

export const MARKET_PARAMS = {
  seed: 28,
  offers: { value: 240, source: 'issue 28: at least 200 offers' },
  dayHours: { value: 24, source: 'issue 28: a 24-hour day' },

  gpuModels: {
    'RTX 5070 Ti': {
      proofSec: 80,
      dphPerGpu: 0.29,
      weight: 3,
      gpuRamMb: 16303,
      source: 'demo (80 s, $0.29 on 768 GB); cuzk.md publishes 37.7 s on 512-768 GiB',
    },
    'RTX 4090': {
      proofSec: 143,
      dphPerGpu: 0.41,
      weight: 3,
      gpuRamMb: 24564,
      source: 'cuzk.md (SupraSeal C2 143 s); demo price $0.41',
    },
    'RTX 3090': {
      proofSec: 150,
      dphPerGpu: 0.23,
      weight: 3,
      gpuRamMb: 24576,
      source: 'cuzk.md (138 s SupraSeal), demo 180 s on 2x/251 GB; demo price $0.46 for 2 GPUs',
    },
    A40: {
      proofSec: 200,
      dphPerGpu: 0.56,
      weight: 1,
      gpuRamMb: 46068,
      source: 'seeds/cuzk.md: 2x A40 measured 35.9 proofs/h; demo price $1.12 for 2 GPUs',
    },
    'RTX PRO 4000': {
      proofSec: 120,
      dphPerGpu: 0.38,
      weight: 1,
      gpuRamMb: 24467,
      source: 'demo (120 s, $0.38)',
    },
    'RTX 4080': {
      proofSec: 150,
      dphPerGpu: 0.33,
      weight: 2,
      gpuRamMb: 16376,
      source: 'demo (150 s, $0.33)',
    },
    'RTX 3060': {
      proofSec: 500,
      dphPerGpu: 0.12,
      weight: 2,
      gpuRamMb: 12288,
      source: 'demo (500 s, $0.12): the cheap, too-slow offer',
    },
  } satisfies Record<string, GpuModelParams>,

  /** Host RAM (MB, as Vast reports it) and how often; the proof slows on less RAM (synthesis is RAM-bound). */
  ram: {
    value: [
      { mb: 128_000, weight: 2, proofFactor: 4.0 },
      { mb: 257_024, weight: 4, proofFactor: 1.4 },
      { mb: 516_096, weight: 3, proofFactor: 1.0 },
      { mb: 786_432, weight: 2, proofFactor: 1.0 },
      { mb: 2_064_384, weight: 1, proofFactor: 1.0 },
    ],
    source:
      'cuzk.md: RTX 5070 Ti 37.7 s at 512-768 GiB, 53 s at 256 GiB (x1.4), 152 s at 128 GiB (x4); RAM mix: demo hosts (128 GB-2 TB), weights an assumption',
  },
  gpuCount: {
    value: [
      { n: 1, weight: 6 },
      { n: 2, weight: 3 },
      { n: 4, weight: 1 },
    ],
    source: 'demo has 1x and 2x hosts; 4x and the weights are an assumption',
  },
  /** Log-normal spread of a host's proof time around its model's and RAM's (sigma of ln). */
  rateSpread: { value: 0.15, source: 'assumption (no two seed hosts of one model to measure it)' },
  /** Spread of the per-GPU price around the model's: uniform in [low, high] times the model's. */
  priceSpread: { value: { low: 0.8, high: 1.3 }, source: 'assumption' },
  storageCost: {
    value: { typical: { low: 0.05, high: 0.3 }, dearShare: 0.1, dear: { low: 1.0, high: 1.5 } },
    source:
      'vast-api.md: storage_cost $/GB/month, 0.1 typical; demo 0.05-1.2; "some hosts charge ten times that" (scenario.ts). Share of dear hosts: assumption',
  },
  listing: {
    value: { listedAtStart: 0.6, meanListedHours: 6 },
    source:
      'vast-api.md: an offer id is short-lived, it disappears once rented or unlisted. Share listed at the start and mean life: assumption',
  },

  /** Fault rates, per rented offer. The sim knob each uses is named; 0 = the simulator cannot do it yet. */
  faults: {
    oomOnLowRam: {
      value: 1,
      knob: 'host.faults.oomOnPceAbovePartitionWorkers = 4, on hosts of <= 128 GB only',
      source: 'seeds/cuzk.md: building the PCE with many partition workers OOM-killed the 125 GB host (1 of 1)',
    },
    transportDropAfterRestart: {
      value: 0.14,
      knob: 'host.faults.transportDrops = 1',
      source: 'seeds 000/003: the 2x RTX 3090 dropped its stream on the first proof after restart (1 of 7)',
    },
    daemonCrash: {
      value: 0.14,
      knob: 'host.faults.crashAfterProofs = 1..6',
      source: 'seeds 001/002/004: the RTX PRO 4000 daemon exited mid-benchmark (1 of 7)',
    },
    paramfetchStall: {
      value: 0.07,
      knob: "host.faults.paramfetch = 'stall'",
      source: 'demo: the RTX 4080 host stalls in paramfetch (1 of 7, halved: the seeds saw one clean 4-min fetch too)',
    },
    paramfetchFail: {
      value: 0.03,
      knob: "host.faults.paramfetch = 'fail'",
      source: 'cuzk.md lists paramfetch that fails; never seen in the seeds: assumption',
    },
    neverRuns: {
      value: 0.05,
      knob: "instance.fate = 'stuck_loading' (2/3) or 'exited' (1/3)",
      source: 'vast-api.md instance states (loading, exited); rate: assumption',
    },
    hardwareDiffers: {
      value: 0.03,
      knob: 'host.proofSec x 2.5 (the host has slower hardware than it lists)',
      source:
        "issue 28 names it; rate: assumption. The simulator cannot yet report a GPU name other than the offer's, so only the slower rate is simulated, not the name mismatch",
    },
    preemption: {
      value: 0.03,
      knob: 'instance.preemptAfterSec uniform over the day',
      source: 'vast-api.md: a host can go offline; on-demand rentals are rarely taken back: assumption',
    },
    priceRise: {
      value: 0.05,
      knob: 'the bench raises the billed $/h by 30 % (POST /_sim/instances/:id/price) at a uniform time',
      source: 'vast-api.md (a host can change its price); rate and size: assumption',
    },
    degradation: {
      value: 0.05,
      knob: 'host.faults.degradeAfterSec uniform 1-6 h, degradeFactor 3',
      source: 'issue 28 names slow degradation after promotion; rate, onset and factor: assumption',
    },
  },

  fleet: {
    targetRate: { value: 300, source: 'bench choice: a fleet of a few good hosts (proofs/h)' },
    maxDph: { value: 6, source: 'bench choice: budget in $/h' },
    minRate: {
      value: DEFAULT_MIN_RATE,
      source: 'seeds: 29.0 proofs/h was the keep/kill bar in use (DEFAULT_MIN_RATE)',
    },
    maxInstances: { value: 12, source: 'bench choice' },
    maxConcurrentBenchmarks: { value: 4, source: 'bench choice' },
    explorationSlots: { value: 1, source: 'bench choice: one never-benchmarked GPU model per scaler run' },
    diskGb: { value: DEFAULT_DISK_GB, source: 'workflows/domain/policy/defaults.ts DEFAULT_DISK_GB' },
    /** Before a host proves: boot (loading), paramfetch, daemon start. */
    bootSec: {
      value: 30 + 240 + 45,
      source: 'sim defaults: loading 30 s, paramfetch 240 s (cuzk.md ~4 min), startup 45 s',
    },
  },
} as const;

export type MarketParams = typeof MARKET_PARAMS;
