import { z } from 'zod';

/**
 * How one simulated machine behaves. Times are real-world seconds (from ../shared/reference/cuzk.md and
 * the seeds); SIM_TIME_SCALE compresses them, e.g. 0.01 makes a 100 s proof take 1 s.
 */
export const HostScenarioSchema = z.object({
  /** Seconds for one 32 GiB PoRep C2 on this host at full partition workers. */
  proofSec: z.number().positive().default(100),
  firstProofAfterRestartExtraSec: z.number().nonnegative().default(150),
  pceExtractSec: z.number().nonnegative().default(70),
  startupSec: z.number().nonnegative().default(45),
  paramfetchSec: z.number().nonnegative().default(240),
  /**
   * What the fitness gate finds on this machine. Unset GPU fields default to what the offer claims, so
   * a host lies by setting them. Disk and link speeds are real-world (not compressed by SIM_TIME_SCALE).
   */
  machine: z
    .object({
      gpus: z.number().int().nonnegative().optional(),
      /** nvidia-smi's name; default the name nvidia-smi gives the offer's model (gpu-names.ts), else "NVIDIA <gpu_name>". */
      gpuName: z.string().min(1).optional(),
      /** nvidia-smi's memory.total in MiB, or N/A (printed [N/A]); default the offer's gpu_ram. */
      vramMiB: z.union([z.number().int().positive(), z.literal('N/A')]).optional(),
      /** How nvidia-smi answers: working, or one of the failures it documents, or output that is not its own. */
      driver: z.enum(['ok', 'broken', 'mismatch', 'no-devices', 'gpu-lost', 'garbled']).default('ok'),
      /** From 610 nvidia-smi prints the KMD banner ("KMD Version", "CUDA UMD Version") and knows kmd_version. */
      driverVersion: z
        .string()
        .regex(/^\d+(\.\d+)+$/)
        .default('550.54.14'),
      /** The banner's CUDA version, or N/A; default the offer's cuda_max_good, else 12.4. */
      cudaVersion: z.union([z.number().positive(), z.literal('N/A')]).optional(),
      diskFreeGiB: z.number().nonnegative().default(1500),
      diskWriteMBps: z.number().positive().default(2000),
      /**
       * Mb/s of the link the download sample measures; unset: no sample URL, the download is not judged
       * (on a loaded two-core machine the simulator's own CPU would bound the sample, not this figure).
       */
      downMbps: z.number().positive().optional(),
      /** Whether the image carries the benchmark's C1 input at C1_PATH. */
      c1: z.enum(['present', 'absent']).default('present'),
    })
    .prefault({}),
  faults: z
    .object({
      /** Building the PCE with more partition workers than this OOM-kills the daemon (125 GB hosts). */
      oomOnPceAbovePartitionWorkers: z.number().int().positive().optional(),
      /** The daemon's stream drops on this many first-proofs-after-restart (the seeds' transport error). */
      transportDrops: z.number().int().nonnegative().default(0),
      neverReady: z.boolean().default(false),
      failProofs: z.boolean().default(false),
      /** Panics (exit 101) after this many completed proofs. */
      crashAfterProofs: z.number().int().nonnegative().optional(),
      /** Proofs never finish (a hung GPU). */
      hangProofs: z.boolean().default(false),
      paramfetch: z.enum(['ok', 'stall', 'fail']).default('ok'),
      /** After this many seconds of daemon uptime every proof takes `degradeFactor` times longer (thermal throttling, a dying GPU). */
      degradeAfterSec: z.number().positive().optional(),
      degradeFactor: z.number().min(1).default(4),
      /** Proof answers that break the contract: `garbage` (wrong job id, empty proof, absurd timing) or `oversized` (over 128 MiB). */
      badResponses: z.enum(['none', 'garbage', 'oversized']).default('none'),
      /**
       * A host that lies about its work: `fast` answers every proof in 1 % of its time (no real proving, a
       * rate no GPU can do); `uniform` answers each after exactly `proofSec` with identical timings (scripted).
       */
      forgedTimings: z.enum(['none', 'fast', 'uniform']).default('none'),
    })
    .default({
      transportDrops: 0,
      neverReady: false,
      failProofs: false,
      hangProofs: false,
      paramfetch: 'ok',
      degradeFactor: 4,
      badResponses: 'none',
      forgedTimings: 'none',
    }),
});
export type HostScenario = z.infer<typeof HostScenarioSchema>;

/** How the Vast side of one offer behaves once rented. */
export const InstanceScenarioSchema = z.object({
  loadingSec: z.number().nonnegative().default(30),
  /**
   * `stopped`: while loading, Vast turns the instance to intended_status/cur_state/next_state "stopped"
   * (an outbid spot, a zero balance): it will never run.
   */
  fate: z.enum(['running', 'stuck_loading', 'exited', 'offline', 'stopped']).default('running'),
  /** Host disappears (preempted) this many seconds after it starts running. */
  preemptAfterSec: z.number().positive().optional(),
  /**
   * How a show answers once the instance is destroyed: `{"instances": null}` (the OpenAPI text) or a
   * 404 (`no_such_instance` as DELETE answers, or `not_found`), as vast-cli's self-test accepts both.
   */
  afterDestroy: z.enum(['null', '404-no_such_instance', '404-not_found']).default('null'),
  /** Instance fields this row's instance serves as null (Vast's SDK types nearly all of them nullable). */
  nullFields: z.array(z.string()).default([]),
});

/** The offer's interruptible market: its `min_bid` now and how it moves on the simulator's clock. */
export const MarketScenarioSchema = z.object({
  /** $/h at the start (default: 60 % of the compute price). */
  minBid: z.number().positive().optional(),
  /** Steps: from `atSec` seconds after the simulator started, min_bid is `minBid`. A rise past a bid stops that instance. */
  minBidPath: z.array(z.object({ atSec: z.number().nonnegative(), minBid: z.number().positive() })).default([]),
  /** Searches show the min_bid of this many seconds ago: a listing that lags the market, so a bid placed on it can be too low. */
  searchLagSec: z.number().nonnegative().default(0),
});

export const SimOfferSchema = z.looseObject({
  id: z.number().int().positive(),
  machine_id: z.number().int().positive(),
  host_id: z.number().int().positive(),
  gpu_name: z.string(),
  num_gpus: z.number().int().positive(),
  gpu_ram: z.number(),
  cpu_ram: z.number(),
  /** $/h as a search for Vast's default 8 GiB of storage shows it (compute plus 8 GiB of storage). */
  dph_total: z.number(),
  /** $/h for compute alone; derived from dph_total and storage_cost when absent. */
  dph_base: z.number().nonnegative().optional(),
  /**
   * $/GB/month of disk. Every real offer has one; 0.1 is a typical community host's, and some hosts
   * charge ten times that, which can make a cheap-looking offer the dearest one at our 200 GB.
   */
  storage_cost: z.number().nonnegative().default(0.1),
  sim: z
    .object({
      host: HostScenarioSchema.default(HostScenarioSchema.parse({})),
      instance: InstanceScenarioSchema.default(InstanceScenarioSchema.parse({})),
      /** Offer fields this row serves as null in searches (cpu_ram, dph_total, cuda_max_good... are nullable in Vast's SDK). */
      offerNullFields: z.array(z.string()).default([]),
      market: MarketScenarioSchema.default({ minBidPath: [], searchLagSec: 0 }),
    })
    .default({
      host: HostScenarioSchema.parse({}),
      instance: InstanceScenarioSchema.parse({}),
      offerNullFields: [],
      market: { minBidPath: [], searchLagSec: 0 },
    }),
});
export type SimOffer = z.infer<typeof SimOfferSchema>;

export const CatalogueSchema = z.object({ offers: z.array(SimOfferSchema).min(1) });

export function timeScale(): number {
  const v = Number(process.env.SIM_TIME_SCALE ?? '1');
  if (!(v > 0 && v <= 1)) throw new Error(`SIM_TIME_SCALE must be in (0, 1], got ${process.env.SIM_TIME_SCALE}`);
  return v;
}

export const scaledMs = (sec: number, scale: number) => Math.round(sec * 1000 * scale);
