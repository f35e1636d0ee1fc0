import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { round } from './common.js';
import { asStack } from './eval/as-stack.js';
import { EvalWorld } from './eval/day.js';
import { runPolicy } from './eval/policies.js';
import { rentalLines } from './market-bench.js';
import { MARKET_PARAMS } from './market-params.js';
import { type PolicyScore, scoreRun } from './market-score.js';
import { generateMarket } from './market.js';

/**
 * `npx tsx infra/bench/agreement.ts <real-stack market result>`: the evaluator on the same seed and hours,
 * with the real-stack day's configuration (eval/as-stack.ts), beside the real-stack run: $ per delivered
 * proof, time to target, rentals and verdicts, the gap in %, and both runs rental by rental.
 */
const Score = z.object({
  dollarsPerProof: z.number().nullable(),
  timeToTargetH: z.number().nullable(),
  proofs: z.number(),
  dollars: z.number(),
  rentals: z.number(),
  rentedTwice: z.number(),
  outcomes: z.record(z.string(), z.number()),
});
const Line = z.object({
  offerId: z.number(),
  runningH: z.number().nullable(),
  promotedH: z.number().nullable(),
  paramfetchH: z.number().nullable().optional(),
  benchmarkH: z.number().nullable().optional(),
  endH: z.number(),
  verdict: z.string(),
});
const ResultSchema = z.object({
  date: z.string(),
  machine: z.object({ cpuModel: z.string().optional(), loadAverage: z.unknown().optional() }),
  market: z.object({
    seed: z.number().int(),
    hours: z.number().positive(),
    timeScale: z.number().positive(),
    policies: z.object({ old: Score.optional(), ours: Score.optional() }),
    rentals: z.object({ old: z.array(Line).optional(), ours: z.array(Line).optional() }).default({}),
  }),
});

const pct = (ev: number | null, real: number | null) =>
  ev === null || real === null || real === 0 ? null : round(((ev - real) / real) * 100, 1);

function evaluate(seed: number, hours: number, scale: number, policy: 'old' | 'ours') {
  const market = generateMarket(MARKET_PARAMS, seed);
  const stack = asStack(scale);
  const w = new EvalWorld(market, hours * 3600, stack.latencies, stack.lifecycle);
  runPolicy(w, policy, { extraStartRun: stack.extraStartRun });
  const day = w.dayRun(policy);
  const F = MARKET_PARAMS.fleet;
  const score: PolicyScore = scoreRun(day, market, {
    timeScale: 1,
    hours,
    targetRate: F.targetRate.value,
    minRate: F.minRate.value,
    bootH: F.bootSec.value / 3600,
  });
  return { score, lines: rentalLines(day, 1) };
}

function main(file: string): void {
  const r = ResultSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  const m = r.market;
  console.log(`${file}: seed ${m.seed}, ${m.hours} h at time scale ${m.timeScale}, ${r.date}`);
  console.log(`machine: ${r.machine.cpuModel ?? '?'}, load ${JSON.stringify(r.machine.loadAverage ?? null)}`);
  for (const policy of ['old', 'ours'] as const) {
    const real = m.policies[policy];
    if (!real) continue;
    const ev = evaluate(m.seed, m.hours, m.timeScale, policy);
    const row = (name: string, a: number | null, b: number | null) => ({
      figure: name,
      realStack: a,
      evaluator: b,
      'gap %': pct(b, a),
    });
    console.log(`\n${policy}:`);
    console.table([
      row('$ per delivered proof', real.dollarsPerProof, round(ev.score.dollarsPerProof ?? NaN, 5)),
      row('time to target (h)', real.timeToTargetH, ev.score.timeToTargetH),
      row('proofs delivered', round(real.proofs, 0), round(ev.score.proofs, 0)),
      row('GPU-$', round(real.dollars, 2), round(ev.score.dollars, 2)),
      row('rentals', real.rentals, ev.score.rentals),
      row('rented twice', real.rentedTwice, ev.score.rentedTwice),
    ]);
    const verdicts = [...new Set([...Object.keys(real.outcomes), ...Object.keys(ev.score.outcomes)])].sort();
    console.table(
      verdicts.map((v) => ({ verdict: v, realStack: real.outcomes[v] ?? 0, evaluator: ev.score.outcomes[v] ?? 0 })),
    );
    console.log('real stack, rental by rental:');
    console.table(m.rentals[policy] ?? []);
    console.log('evaluator, rental by rental:');
    console.table(ev.lines);
  }
}

const file = process.argv[2];
if (!file) {
  console.error('usage: npx tsx infra/bench/agreement.ts infra/bench/results/full-<date>-market-<h>h-ours.json');
  process.exit(2);
}
main(file);
