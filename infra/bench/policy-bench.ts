import { z } from 'zod';
import { round } from './common.js';
import { asStack } from './eval/as-stack.js';
import { EvalWorld } from './eval/day.js';
import { runPolicy } from './eval/policies.js';
import type { RunPolicy } from './market-day.js';
import { MARKET_PARAMS } from './market-params.js';
import { distance, oracleScore, type PolicyScore, scoreRun } from './market-score.js';
import { generateMarket } from './market.js';
import { fleetOracle } from './oracle.js';

/**
 * The policy evaluator's seeds. `untuned` seeds are for judging only: no policy or evaluator parameter
 * may ever be chosen by looking at their figures (docs/benchmarks.md, "The policy evaluator").
 */
export const POLICY_SEEDS: ReadonlyArray<{ seed: number; untuned: boolean }> = [
  { seed: MARKET_PARAMS.seed, untuned: false },
  { seed: 1, untuned: false },
  { seed: 2, untuned: false },
  { seed: 3, untuned: false },
  { seed: 4, untuned: false },
  { seed: 7001, untuned: true },
  { seed: 7002, untuned: true },
];

const Distance = z.object({
  exploration: z.number(),
  benchmarks: z.number(),
  killedHosts: z.number(),
  idle: z.number(),
  price: z.number(),
  total: z.number(),
});

const Figures = z.object({
  dollarsPerProof: z.number().nullable(),
  timeToTargetH: z.number().nullable(),
  proofs: z.number(),
  dollars: z.number(),
  rentals: z.number().int(),
  rentedTwice: z.number().int(),
  healthyKilled: z.number().int(),
  slowPromoted: z.number().int(),
  /** Verdicts by failure type (or outcome) for the rentals that ran. */
  verdicts: z.record(z.string(), z.number().int()),
  /** $ per delivered proof above the oracle's, by cause; null when either delivered none. */
  distanceToOracle: Distance.nullable(),
});

const Median = z.object({ dollarsPerProof: z.number().nullable(), timeToTargetH: z.number().nullable() });

/** The result file's `policy` key: checked before it is written. */
export const PolicyBenchResultSchema = z.object({
  hours: z.number().positive(),
  /** Set when the lifecycles ran with the real-stack day's configuration at this time scale. */
  asStackScale: z.number().positive().nullable(),
  offers: z.number().int(),
  wallSec: z.number(),
  seeds: z.array(
    z.object({ seed: z.number().int(), untuned: z.boolean(), old: Figures, ours: Figures, oracle: Figures }),
  ),
  /** Medians over the seeds; a policy that delivered nothing (or never reached the target) counts as worst. */
  medians: z.object({ old: Median, ours: Median, oracle: Median }),
});
export type PolicyBenchResult = z.infer<typeof PolicyBenchResultSchema>;

function figures(p: PolicyScore, orc: PolicyScore | null): z.infer<typeof Figures> {
  const d = orc ? distance(p, orc) : null;
  return {
    dollarsPerProof: p.dollarsPerProof === null ? null : round(p.dollarsPerProof, 5),
    timeToTargetH: p.timeToTargetH === null ? null : round(p.timeToTargetH, 3),
    proofs: round(p.proofs, 1),
    dollars: round(p.dollars, 3),
    rentals: p.rentals,
    rentedTwice: p.rentedTwice,
    healthyKilled: p.healthyKilled,
    slowPromoted: p.slowPromoted,
    verdicts: p.outcomes,
    distanceToOracle: d && (Object.fromEntries(Object.entries(d).map(([k, v]) => [k, round(v, 5)])) as typeof d),
  };
}

/**
 * One seed's day: old and ours through the evaluator, the oracle computed, all scored alike. With
 * `asStackScale` the lifecycles get the real-stack day's configuration at that time scale (agreement check).
 */
export function evaluateSeed(seed: number, hours: number, asStackScale?: number) {
  const stack = asStackScale === undefined ? null : asStack(asStackScale);
  const market = generateMarket(MARKET_PARAMS, seed);
  const F = MARKET_PARAMS.fleet;
  const bootH = F.bootSec.value / 3600;
  const score: Partial<Record<RunPolicy, PolicyScore>> = {};
  for (const policy of ['old', 'ours'] as const) {
    const w = stack
      ? new EvalWorld(market, hours * 3600, stack.latencies, stack.lifecycle)
      : new EvalWorld(market, hours * 3600);
    runPolicy(w, policy, { extraStartRun: stack?.extraStartRun ?? false });
    score[policy] = scoreRun(w.dayRun(policy), market, {
      timeScale: 1,
      hours,
      targetRate: F.targetRate.value,
      minRate: F.minRate.value,
      bootH,
    });
  }
  const orc = oracleScore(fleetOracle(market, hours));
  return { market, old: score.old!, ours: score.ours!, oracle: orc };
}

/** Median with `null` (no proofs, target never reached) as the worst value; null if the median is one. */
export function medianOrNull(xs: ReadonlyArray<number | null>): number | null {
  const sorted = xs.map((x) => x ?? Infinity).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = sorted.length / 2;
  const v = sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return Number.isFinite(v) ? v : null;
}

/** `npm run bench -- --only policy`: the market day over the seeds, in seconds, no services. */
export function policyBench(o: { hours: number; seeds?: readonly number[]; asStackScale?: number }): PolicyBenchResult {
  const t0 = Date.now();
  const untuned = new Map(POLICY_SEEDS.map((s) => [s.seed, s.untuned]));
  const seeds = (o.seeds ?? POLICY_SEEDS.map((s) => s.seed)).map((seed) => {
    const r = evaluateSeed(seed, o.hours, o.asStackScale);
    return {
      seed,
      untuned: untuned.get(seed) ?? true,
      old: figures(r.old, r.oracle),
      ours: figures(r.ours, r.oracle),
      oracle: figures(r.oracle, null),
    };
  });
  const med = (k: 'old' | 'ours' | 'oracle') => ({
    dollarsPerProof: roundOrNull(medianOrNull(seeds.map((s) => s[k].dollarsPerProof)), 5),
    timeToTargetH: roundOrNull(medianOrNull(seeds.map((s) => s[k].timeToTargetH)), 3),
  });
  return PolicyBenchResultSchema.parse({
    hours: o.hours,
    asStackScale: o.asStackScale ?? null,
    offers: MARKET_PARAMS.offers.value,
    wallSec: round((Date.now() - t0) / 1000, 1),
    seeds,
    medians: { old: med('old'), ours: med('ours'), oracle: med('oracle') },
  });
}

const roundOrNull = (x: number | null, d: number) => (x === null ? null : round(x, d));

/** The table printed: old / ours / oracle per seed, then the medians. */
export function printPolicyBench(r: PolicyBenchResult): void {
  const cell = (x: number | null, unit = '') => (x === null ? '—' : `${x}${unit}`);
  console.log(
    `\nPolicy evaluator (${r.hours} simulated h, ${r.offers} offers, ${r.seeds.length} seeds, ${r.wallSec} s):`,
  );
  const row = (
    label: string,
    f: Record<'old' | 'ours' | 'oracle', { dollarsPerProof: number | null; timeToTargetH: number | null }>,
  ) => ({
    seed: label,
    '$/proof old': cell(f.old.dollarsPerProof),
    '$/proof ours': cell(f.ours.dollarsPerProof),
    '$/proof oracle': cell(f.oracle.dollarsPerProof),
    'to target old': cell(f.old.timeToTargetH, ' h'),
    'to target ours': cell(f.ours.timeToTargetH, ' h'),
    'to target oracle': cell(f.oracle.timeToTargetH, ' h'),
  });
  console.table([...r.seeds.map((s) => row(`${s.seed}${s.untuned ? ' (untuned)' : ''}`, s)), row('median', r.medians)]);
  console.log('ours: $ per proof above the oracle, by cause:');
  console.table(r.seeds.map((s) => ({ seed: s.seed, ...s.ours.distanceToOracle })));
}
