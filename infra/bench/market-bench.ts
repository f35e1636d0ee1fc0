import { log, round } from './common.js';
import { type DayRun, type RunPolicy, runMarketDay } from './market-day.js';
import { MARKET_PARAMS } from './market-params.js';
import { distance, oracleScore, type PolicyScore, scoreRun } from './market-score.js';
import { generateMarket } from './market.js';
import { fleetOracle } from './oracle.js';

/**
 * Market: one seeded market day (market-params.ts), the seeds' old policy and ours each run through it
 * on the real stack, one after the other (each its own fresh stack, so neither sees the other's fleet),
 * and the oracle computed on the same market. `hours` may be shorter than the market's day.
 */
export async function marketBench(o: {
  hours: number;
  timeScale: number;
  seed?: number;
  /** Which policies run on the real stack (default both); one alone lets `ours` run longer in the same wall time. */
  policies?: readonly RunPolicy[];
}) {
  const seed = o.seed ?? MARKET_PARAMS.seed;
  const market = generateMarket(MARKET_PARAMS, seed);
  const F = MARKET_PARAMS.fleet;
  const bootH = F.bootSec.value / 3600;
  const scoreOpts = {
    timeScale: o.timeScale,
    hours: o.hours,
    targetRate: F.targetRate.value,
    minRate: F.minRate.value,
    bootH,
  };
  const runs: Partial<Record<RunPolicy, PolicyScore>> = {};
  const rentals: Partial<Record<RunPolicy, RentalLine[]>> = {};
  for (const policy of o.policies ?? (['old', 'ours'] as const)) {
    log(`market: ${policy} policy, ${o.hours} simulated h at time scale ${o.timeScale}`);
    const t = Date.now();
    const day = await runMarketDay(policy, market, o);
    runs[policy] = scoreRun(day, market, scoreOpts);
    rentals[policy] = rentalLines(day, o.timeScale);
    log(`market: ${policy} done in ${Math.round((Date.now() - t) / 1000)} s`);
  }
  const orc = oracleScore(fleetOracle(market, o.hours));
  const policies: Partial<Record<RunPolicy, PolicyScore>> & { oracle: PolicyScore } = { ...runs, oracle: orc };
  const rounded = (d: ReturnType<typeof distance>) =>
    d && Object.fromEntries(Object.entries(d).map(([k, v]) => [k, round(v, 5)]));
  return {
    seed,
    offers: market.length,
    hours: o.hours,
    timeScale: o.timeScale,
    target: { rate: F.targetRate.value, maxDph: F.maxDph.value, minRate: F.minRate.value },
    policies,
    /** Each rental of each policy in simulated hours, for comparing a run rental by rental (the evaluator's too). */
    rentals,
    /** $ per delivered proof above the oracle's, by cause. */
    distanceToOracle: {
      ours: policies.ours ? rounded(distance(policies.ours, orc)) : null,
      old: policies.old ? rounded(distance(policies.old, orc)) : null,
    },
    vsGoal: {
      oursOverOracle: ratio(policies.ours?.dollarsPerProof ?? null, orc.dollarsPerProof),
      oursOverOld: ratio(policies.ours?.dollarsPerProof ?? null, policies.old?.dollarsPerProof ?? null),
      timeToTargetOursOverOracle: ratio(policies.ours?.timeToTargetH ?? null, orc.timeToTargetH),
    },
  };
}

/** One rental in simulated hours from the day's start; null where it never got there. */
export interface RentalLine {
  offerId: number;
  runningH: number | null;
  promotedH: number | null;
  paramfetchH: number | null;
  benchmarkH: number | null;
  endH: number;
  verdict: string;
}

export function rentalLines(day: DayRun, timeScale: number): RentalLine[] {
  const h = (at: number | null) => (at === null ? null : round((at - day.t0) / 3600_000 / timeScale, 3));
  return day.rentals.map((r) => ({
    offerId: r.offerId,
    runningH: h(r.runningAt),
    promotedH: h(r.promotedAt),
    paramfetchH: h(r.paramfetchAt ?? null),
    benchmarkH: h(r.benchmarkAt ?? null),
    endH: h(r.endAt)!,
    verdict: r.failureType ?? r.outcome ?? 'no verdict at day end',
  }));
}

const ratio = (a: number | null, b: number | null) => (a !== null && b !== null && b > 0 ? round(a / b, 3) : null);

export type MarketResult = Awaited<ReturnType<typeof marketBench>>;

/** The side-by-side table printed and put in docs/benchmarks.md. */
export function marketTable(r: MarketResult) {
  const h = (x: number | null) => (x === null ? 'not reached' : `${round(x, 2)} h`);
  return Object.entries(r.policies).map(([name, p]) => ({
    policy: name,
    '$/proof': p.dollarsPerProof === null ? 'no proofs' : round(p.dollarsPerProof, 5),
    'time to target': h(p.timeToTargetH),
    proofs: Math.round(p.proofs),
    'GPU-$': round(p.dollars, 2),
    'GPU-$ killed': round(p.gpuDollarsOnKilled, 2),
    'healthy killed': p.healthyKilled,
    'slow promoted': p.slowPromoted,
    'left running': p.leftRunning,
    'rented twice': p.rentedTwice,
    rentals: p.rentals,
  }));
}
