import { type SimOffer, SimOfferSchema } from '../../infra/sim/scenario.js';

// Test files share one database: start each file's ids in a block of its own.
const block = Math.floor(Math.random() * 1_000_000) * 100;
let nextOffer = 100_000_000 + block;
let nextMachine = 100_000_000 + block;

/** A Vast offer row with realistic fields (RAM in MB), plus the simulator's behaviour block. */
export function simOffer(
  over: Partial<SimOffer> & {
    host?: Record<string, unknown>;
    instance?: Record<string, unknown>;
    /** Offer fields this row serves as null in searches. */
    offerNullFields?: string[];
    /** The offer's interruptible market (min_bid and its moves). */
    market?: Record<string, unknown>;
  } = {},
): SimOffer {
  const { host, instance, offerNullFields, market, ...rest } = over;
  return SimOfferSchema.parse({
    id: nextOffer++,
    machine_id: nextMachine++,
    host_id: 125_418,
    gpu_name: 'RTX 4090',
    num_gpus: 2,
    gpu_ram: 24_564,
    gpu_total_ram: 49_128,
    cpu_ram: 257_024,
    cpu_cores: 64,
    cpu_cores_effective: 64,
    dph_total: 0.82,
    reliability2: 0.97,
    cuda_max_good: 12.4,
    verification: 'verified',
    disk_space: 1600,
    inet_down: 900,
    geolocation: 'Czechia, CZ',
    ...rest,
    sim: {
      host: { startupSec: 20, paramfetchSec: 100, ...host },
      instance: { loadingSec: 20, ...instance },
      offerNullFields: offerNullFields ?? [],
      market: market ?? {},
    },
  });
}
