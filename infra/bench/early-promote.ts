import { DEFAULT_CONCURRENCY, DEFAULT_VERDICTS } from '../../workflows/domain/policy/defaults.js';
import { planBenchmark } from '../../workflows/domain/policy/concurrency.js';
import { earlyPromoteEvidence } from '../../workflows/domain/policy/early-promote.js';
import { CONFIDENCE_LEVELS, type Confidence } from '../../workflows/domain/policy/student-t.js';
import { simulateBatch } from '../sim/cuzk/timing-model.js';
import { generateMarket } from './market.js';
import { MARKET_PARAMS } from './market-params.js';

/**
 * Benchmark minutes early promote saves per healthy host: every host of the seeded market (the
 * simulator's rate spread) through a production batch (12 proofs, the planned concurrency, minRate 29)
 * in the simulator's timing model, promoted at the first completion the sequential test accepts.
 * `npx tsx infra/bench/early-promote.ts` prints one row per confidence level, in real minutes and proofs.
 */
const PROOFS = 12;
const MIN_RATE = MARKET_PARAMS.fleet.minRate.value;
const EARLY_STOP_AFTER = 3;

export function earlyPromoteSavings(confidence: Confidence) {
  const rows = [];
  for (const m of generateMarket()) {
    const plan = planBenchmark(m.offer.num_gpus, m.offer.cpu_ram, DEFAULT_CONCURRENCY);
    const proofs = simulateBatch({
      proofSec: m.offer.sim.host.proofSec,
      gpus: m.offer.num_gpus,
      partitionWorkers: plan.partitionWorkers,
      concurrency: plan.concurrency,
      count: PROOFS,
    });
    const fullSec = proofs[proofs.length - 1]!.endSec;
    const fullRate = PROOFS / (fullSec / 3600);
    let promotedSec: number | null = null;
    for (let k = 1; k < proofs.length && promotedSec === null; k++) {
      const e = earlyPromoteEvidence({
        totalsMs: proofs.slice(0, k).map((p) => p.totalSec * 1000),
        requested: PROOFS,
        elapsedMs: proofs[k - 1]!.endSec * 1000,
        concurrency: plan.concurrency,
        minRate: MIN_RATE,
        confidence,
        minProofs: Math.max(EARLY_STOP_AFTER, plan.concurrency),
      });
      if (e) promotedSec = proofs[k - 1]!.endSec;
    }
    rows.push({ healthy: fullRate >= MIN_RATE, fullSec, promotedSec, fullRate });
  }
  const healthy = rows.filter((r) => r.healthy);
  const savedMin = healthy.map((r) => (r.fullSec - (r.promotedSec ?? r.fullSec)) / 60).sort((a, b) => a - b);
  const q = (p: number) => savedMin[Math.min(savedMin.length - 1, Math.floor(p * savedMin.length))] ?? 0;
  const mean = savedMin.reduce((s, x) => s + x, 0) / Math.max(1, savedMin.length);
  const gained = healthy.reduce((s, r) => s + ((r.fullSec - (r.promotedSec ?? r.fullSec)) / 3600) * r.fullRate, 0);
  return {
    confidence,
    hosts: rows.length,
    healthy: healthy.length,
    promotedEarly: healthy.filter((r) => r.promotedSec !== null).length,
    wronglyPromoted: rows.filter((r) => !r.healthy && r.promotedSec !== null).length,
    meanBatchMin: healthy.reduce((s, r) => s + r.fullSec / 60, 0) / Math.max(1, healthy.length),
    meanSavedMin: mean,
    medianSavedMin: q(0.5),
    p10SavedMin: q(0.1),
    p90SavedMin: q(0.9),
    /** Production proofs a healthy host delivers in the minutes saved (same billed $/h, in production sooner). */
    meanProofsGained: gained / Math.max(1, healthy.length),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r2 = (x: number) => Math.round(x * 100) / 100;
  console.table(
    CONFIDENCE_LEVELS.map((c) => {
      const s = earlyPromoteSavings(c);
      return {
        confidence: `${c * 100} %${c === DEFAULT_VERDICTS.confidence ? ' (default)' : ''}`,
        'healthy hosts': `${s.healthy} of ${s.hosts}`,
        'promoted early': s.promotedEarly,
        'wrongly promoted': s.wronglyPromoted,
        'full batch (min, mean)': r2(s.meanBatchMin),
        'saved (min, mean)': r2(s.meanSavedMin),
        'saved (min, p10/median/p90)': `${r2(s.p10SavedMin)} / ${r2(s.medianSavedMin)} / ${r2(s.p90SavedMin)}`,
        'proofs gained per host (mean)': r2(s.meanProofsGained),
      };
    }),
  );
}
