import { isFailureType } from '../../workflows/domain/failures.js';
import { FAILURE_VERDICTS } from '../../workflows/domain/policy/verdicts.js';
import type { DayRun, Rental } from './market-day.js';
import type { MarketOffer } from './market.js';
import type { OracleResult } from './oracle.js';

export interface ScoreOptions {
  timeScale: number;
  hours: number;
  targetRate: number;
  minRate: number;
  /** Hours before a host proves (boot, paramfetch, daemon start), for when its degradation starts. */
  bootH: number;
}

/** Where a policy's GPU-dollars went (all billed, storage included). */
export interface Spend {
  /** Promoted hosts from running to promotion: boot, paramfetch, warmups, the benchmark. */
  beforeProduction: number;
  production: number;
  /** Hosts killed whose GPU model this run had not rented before (learning about a model). */
  exploration: number;
  killed: number;
  /** Rentals without a verdict when the day ended: paid, not yet proving. */
  idle: number;
}

export interface PolicyScore {
  dollars: number;
  proofs: number;
  dollarsPerProof: number | null;
  timeToTargetH: number | null;
  gpuDollarsOnKilled: number;
  healthyKilled: number;
  slowPromoted: number;
  leftRunning: number;
  rentedTwice: number;
  rentals: number;
  /** Verdicts by failure type (or outcome), for the rentals that ran. */
  outcomes: Record<string, number>;
  spend: Spend;
}

const STEP_H = 1 / 60;

/** Whether the verdict table lays this ending to the market's cause (workflows/domain/policy/verdicts.ts). */
export function marketEnding(failureType: string | null): boolean {
  return isFailureType(failureType) && FAILURE_VERDICTS[failureType].cause === 'market';
}

/** A promoted host's true proofs/h `age` hours after it started running (0 once preempted). */
export function rateAt(m: MarketOffer, age: number, bootH: number): number {
  if (m.preemptAfterH !== null && age >= m.preemptAfterH) return 0;
  const degraded = m.degradeAfterH !== null && age - bootH >= m.degradeAfterH;
  return m.trueRate / (degraded ? 3 : 1);
}

/**
 * Scores one policy's day. Dollars are what the simulator billed (price rises included) from running
 * to destroy or the end of the day. Proofs delivered are the promoted hosts' true rates over their
 * production time (degradation and preemption included): computed from the market, not counted
 * from the daemons.
 */
export function scoreRun(run: DayRun, market: MarketOffer[], o: ScoreOptions): PolicyScore {
  const byId = new Map(market.map((m) => [m.offer.id, m]));
  const simH = (at: number) => (at - run.t0) / 3600_000 / o.timeScale;
  const spend: Spend = { beforeProduction: 0, production: 0, exploration: 0, killed: 0, idle: 0 };
  let proofs = 0;
  let healthyKilled = 0;
  let slowPromoted = 0;
  const modelsSeen = new Set<string>();
  const outcomes: Record<string, number> = {};
  const ran = run.rentals
    .filter((r): r is Rental & { runningAt: number } => r.runningAt !== null)
    .sort((a, b) => a.runningAt - b.runningAt);
  const producing: Array<{ m: MarketOffer; runH: number; fromH: number; toH: number }> = [];
  for (const r of ran) {
    const m = byId.get(r.offerId);
    if (!m) throw new Error(`rental of offer ${r.offerId}, which is not in the market`);
    const runH = simH(r.runningAt);
    const endH = Math.max(runH, simH(r.endAt));
    const raiseH = r.priceRaisedAt !== null ? simH(r.priceRaisedAt) : Infinity;
    const paid = (a: number, b: number) =>
      m.billedDph * (Math.max(0, Math.min(b, raiseH) - a) + 1.3 * Math.max(0, b - Math.max(a, raiseH)));
    const verdict = r.failureType ?? r.outcome ?? 'no verdict at day end';
    outcomes[verdict] = (outcomes[verdict] ?? 0) + 1;
    const firstOfModel = !modelsSeen.has(m.offer.gpu_name);
    modelsSeen.add(m.offer.gpu_name);
    if (r.promotedAt !== null) {
      const promH = Math.min(endH, simH(r.promotedAt));
      spend.beforeProduction += paid(runH, promH);
      spend.production += paid(promH, endH);
      // Each step's rate taken at its middle, so a change of rate on a step's edge is counted exactly.
      for (let i = 0; promH + i * STEP_H < endH; i++) {
        const a = promH + i * STEP_H;
        const b = Math.min(endH, a + STEP_H);
        proofs += rateAt(m, (a + b) / 2 - runH, o.bootH) * (b - a);
      }
      producing.push({ m, runH, fromH: promH, toH: endH });
      if (m.trueRate < o.minRate) slowPromoted++;
    } else if (r.outcome === 'killed') {
      if (firstOfModel) spend.exploration += paid(runH, endH);
      else spend.killed += paid(runH, endH);
    } else spend.idle += paid(runH, endH);
    // An ending the verdict table lays to the market (a taken offer, a price over the budget, keep by the
    // dollar and rebalancing, an outbid) is a choice on price, not a verdict on the host's health.
    if (r.outcome === 'killed' && !marketEnding(r.failureType)) {
      const age = endH - runH;
      const healthyThen = !m.fatal && m.trueRate >= o.minRate && rateAt(m, age, o.bootH) >= o.minRate;
      if (healthyThen) healthyKilled++;
    }
  }
  let timeToTargetH: number | null = null;
  for (let i = 0; i * STEP_H < o.hours && timeToTargetH === null; i++) {
    const t = i * STEP_H;
    const rate = producing
      .filter((p) => p.fromH <= t && t < p.toH)
      .reduce((a, p) => a + rateAt(p.m, t - p.runH, o.bootH), 0);
    if (rate >= o.targetRate) timeToTargetH = t;
  }
  const dollars = spend.beforeProduction + spend.production + spend.exploration + spend.killed + spend.idle;
  return {
    dollars,
    proofs,
    dollarsPerProof: proofs > 0 ? dollars / proofs : null,
    timeToTargetH,
    gpuDollarsOnKilled: spend.exploration + spend.killed,
    healthyKilled,
    slowPromoted,
    leftRunning: run.leftRunning,
    rentedTwice: run.rentedTwice,
    rentals: ran.length,
    outcomes,
    spend,
  };
}

export function oracleScore(r: OracleResult): PolicyScore {
  return {
    dollars: r.dollars,
    proofs: r.proofs,
    dollarsPerProof: r.dollarsPerProof,
    timeToTargetH: r.timeToTargetH,
    gpuDollarsOnKilled: 0,
    healthyKilled: 0,
    slowPromoted: 0,
    leftRunning: 0,
    rentedTwice: 0,
    rentals: r.rented.length,
    outcomes: { promoted: r.rented.length },
    spend: { beforeProduction: r.bootDollars, production: r.productionDollars, exploration: 0, killed: 0, idle: 0 },
  };
}

/**
 * The distance of a policy's $ per delivered proof from the oracle's, in parts that add up to it:
 * each part is the policy's dollars of that kind per proof it delivered, less the oracle's.
 */
export function distance(p: PolicyScore, oracle: PolicyScore) {
  if (!p.proofs || !oracle.proofs) return null;
  const per = (x: number, s: PolicyScore) => x / s.proofs;
  return {
    exploration: per(p.spend.exploration, p),
    benchmarks: per(p.spend.beforeProduction, p) - per(oracle.spend.beforeProduction, oracle),
    killedHosts: per(p.spend.killed, p),
    idle: per(p.spend.idle, p),
    price: per(p.spend.production, p) - per(oracle.spend.production, oracle),
    total: p.dollarsPerProof! - oracle.dollarsPerProof!,
  };
}
