import { DEFAULT_CONCURRENCY } from '../../workflows/domain/policy/defaults.js';
import { planBenchmark } from '../../workflows/domain/policy/concurrency.js';
import { type SimOffer, SimOfferSchema } from '../sim/scenario.js';
import { DEFAULT_ALLOCATED_STORAGE_GB, simBilledDph, simStorageDph } from '../sim/vast/pricing.js';
import { MARKET_PARAMS, type MarketParams } from './market-params.js';
import { seededRandom } from '../sim/random.js';

/** One offer of the market with what only the bench knows: its true rate, when it is listed, its fate. */
export interface MarketOffer {
  offer: SimOffer;
  /** Proofs/h this host delivers when nothing goes wrong (the simulator's proving model). */
  trueRate: number;
  /** $/h an 8 GiB search shows, and $/h Vast bills for the disk the lifecycle rents. */
  searchedDph: number;
  billedDph: number;
  /** Hours into the day when the offer is listed and when someone else rents it (if we have not). */
  listedAtH: number;
  takenAtH: number;
  /** Faults drawn for it (names of MARKET_PARAMS.faults), and their times in hours of uptime. */
  faults: string[];
  /** It never proves in production: never runs, paramfetch stalls/fails, the daemon crashes. */
  fatal: boolean;
  priceRiseAtH: number | null;
  degradeAfterH: number | null;
  preemptAfterH: number | null;
}

function pick<T extends { weight: number }>(r: () => number, xs: readonly T[]): T {
  const total = xs.reduce((s, x) => s + x.weight, 0);
  let u = r() * total;
  for (const x of xs) if ((u -= x.weight) < 0) return x;
  return xs[xs.length - 1]!;
}

/** Standard normal by Box-Muller. */
function normal(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}

/**
 * Proofs/h of a host in the simulator's proving model (infra/sim/cuzk/engine.ts): each proof is
 * synthesis (0.55 x proofSec, slower under 10 partition workers) then GPU time (0.45 x proofSec,
 * one proof per GPU at a time), with the concurrency the lifecycle plans from GPUs and RAM.
 */
export function simTrueRate(proofSec: number, numGpus: number, ramMb: number): number {
  const plan = planBenchmark(numGpus, ramMb, DEFAULT_CONCURRENCY);
  const latency = proofSec * 0.55 * Math.max(1, Math.sqrt(10 / plan.partitionWorkers)) + proofSec * 0.45;
  const perSec = Math.min(plan.concurrency / latency, numGpus / (proofSec * 0.45));
  return perSec * 3600;
}

/** The market of one seed: deterministic for (params, seed), ids unique, sorted by listing time. */
export function generateMarket(p: MarketParams = MARKET_PARAMS, seed: number = p.seed): MarketOffer[] {
  const r = seededRandom(seed);
  const models = Object.entries(p.gpuModels).map(([name, m]) => ({ name, ...m }));
  const f = p.faults;
  const day = p.dayHours.value;
  const out: MarketOffer[] = [];
  for (let i = 0; i < p.offers.value; i++) {
    const model = pick(r, models);
    const ram = pick(r, p.ram.value);
    const gpus = pick(r, p.gpuCount.value).n;
    const spread = Math.exp(p.rateSpread.value * normal(r));
    const faults: string[] = [];
    const has = (name: keyof typeof f) => {
      const hit = r() < f[name].value;
      if (hit) faults.push(name);
      return hit;
    };
    const oom = ram.mb <= 128_000 && has('oomOnLowRam');
    const drop = has('transportDropAfterRestart');
    const crash = has('daemonCrash');
    const stall = has('paramfetchStall');
    const fetchFail = !stall && has('paramfetchFail');
    const never = has('neverRuns');
    const neverFate = r() < 2 / 3 ? 'stuck_loading' : 'exited';
    const differs = has('hardwareDiffers');
    const preempt = has('preemption');
    const rise = has('priceRise');
    const degrade = has('degradation');
    const proofSec = model.proofSec * ram.proofFactor * spread * (differs ? 2.5 : 1);
    const s = p.storageCost.value;
    const dear = r() < s.dearShare;
    const band = dear ? s.dear : s.typical;
    const storageCost = band.low + r() * (band.high - band.low);
    const priceFactor = p.priceSpread.value.low + r() * (p.priceSpread.value.high - p.priceSpread.value.low);
    const base = model.dphPerGpu * gpus * priceFactor;
    const dphTotal = base + simStorageDph(DEFAULT_ALLOCATED_STORAGE_GB, storageCost);
    const listedAtH = r() < p.listing.value.listedAtStart ? 0 : r() * day;
    const takenAtH = listedAtH - p.listing.value.meanListedHours * Math.log(1 - r());
    const preemptAfterH = preempt ? r() * day : null;
    const priceRiseAtH = rise ? r() * day : null;
    const degradeAfterH = degrade ? 1 + r() * 5 : null;
    const crashAfter = 1 + Math.floor(r() * 6);
    const id = 40_000_000 + i;
    const offer = SimOfferSchema.parse({
      id,
      machine_id: 60_000 + i,
      host_id: 80_000 + Math.floor(i / 3),
      gpu_name: model.name,
      num_gpus: gpus,
      gpu_ram: model.gpuRamMb,
      gpu_total_ram: model.gpuRamMb * gpus,
      cpu_ram: ram.mb,
      cpu_cores: 16 * gpus,
      cpu_cores_effective: 16 * gpus,
      dph_total: round6(dphTotal),
      storage_cost: round6(storageCost),
      reliability2: 0.95,
      cuda_max_good: 12.4,
      verification: 'verified',
      geolocation: 'Simulated, SM',
      disk_space: 2000,
      inet_down: 1000,
      sim: {
        host: {
          proofSec: round6(proofSec),
          faults: {
            ...(oom ? { oomOnPceAbovePartitionWorkers: 4 } : {}),
            transportDrops: drop ? 1 : 0,
            ...(crash ? { crashAfterProofs: crashAfter } : {}),
            paramfetch: stall ? 'stall' : fetchFail ? 'fail' : 'ok',
            ...(degradeAfterH !== null ? { degradeAfterSec: degradeAfterH * 3600, degradeFactor: 3 } : {}),
          },
        },
        instance: {
          fate: never ? neverFate : 'running',
          ...(preemptAfterH !== null ? { preemptAfterSec: preemptAfterH * 3600 } : {}),
        },
      },
    });
    out.push({
      offer,
      trueRate: simTrueRate(offer.sim.host.proofSec, gpus, ram.mb),
      searchedDph: offer.dph_total,
      billedDph: simBilledDph(offer, p.fleet.diskGb.value),
      listedAtH,
      takenAtH,
      faults,
      fatal: never || stall || fetchFail || crash,
      priceRiseAtH,
      degradeAfterH,
      preemptAfterH,
    });
  }
  return out.sort((a, b) => a.listedAtH - b.listedAtH || a.offer.id - b.offer.id);
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
