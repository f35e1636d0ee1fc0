import { MARKET_PARAMS } from './market-params.js';
import type { MarketOffer } from './market.js';

export interface OracleOptions {
  targetRate: number;
  maxDph: number;
  maxInstances: number;
  minRate: number;
  /** Hours every host pays before it proves: boot, parameter fetch, daemon start. */
  bootH: number;
  horizonH: number;
  /** Time step of the computation (hours). */
  stepH?: number;
}

export interface OracleResult {
  dollars: number;
  bootDollars: number;
  productionDollars: number;
  proofs: number;
  dollarsPerProof: number | null;
  /** Hours until the producing fleet first reached the target; null if it never did. */
  timeToTargetH: number | null;
  rented: number[];
}

interface Held {
  m: MarketOffer;
  rentedAtH: number;
  releasedAtH: number | null;
}

/** A host's true proofs/h and billed $/h at `t`, `age` hours after it was rented (null once gone). */
function stateAt(h: Held, t: number, bootH: number): { rate: number; dph: number } | null {
  const age = t - h.rentedAtH;
  const m = h.m;
  if (m.preemptAfterH !== null && age >= m.preemptAfterH) return null;
  const dph = m.billedDph * (m.priceRiseAtH !== null && age >= m.priceRiseAtH ? 1.3 : 1);
  if (age < bootH) return { rate: 0, dph };
  const degraded = m.degradeAfterH !== null && age - bootH >= m.degradeAfterH;
  return { rate: m.trueRate / (degraded ? 3 : 1), dph };
}

/**
 * The physical limit, computed: with every offer's true rate and fate known, rent at each step the
 * healthy listed offers with the most proofs per billed dollar until the fleet's rate reaches the
 * target (within budget and instance cap); pay only boot, parameter fetch and production; give a host
 * back the moment it is preempted or degrades under the minimum rate. No benchmarks, no exploration.
 */
export function oracle(market: MarketOffer[], o: OracleOptions): OracleResult {
  const step = o.stepH ?? 1 / 60;
  const held: Held[] = [];
  const rentedIds = new Set<number>();
  let bootDollars = 0;
  let productionDollars = 0;
  let proofs = 0;
  let timeToTargetH: number | null = null;
  for (let t = 0; t < o.horizonH - 1e-9; t += step) {
    // Give back what is gone or no longer worth its place.
    for (const h of held) {
      if (h.releasedAtH !== null) continue;
      const s = stateAt(h, t, o.bootH);
      if (s === null || (t - h.rentedAtH >= o.bootH && s.rate < o.minRate)) h.releasedAtH = t;
    }
    const live = held.filter((h) => h.releasedAtH === null);
    let rate = live.reduce((a, h) => a + h.m.trueRate, 0);
    let dph = live.reduce((a, h) => a + (stateAt(h, t, o.bootH)?.dph ?? 0), 0);
    let count = live.length;
    const candidates = market
      .filter(
        (m) =>
          !rentedIds.has(m.offer.id) &&
          m.listedAtH <= t &&
          t < m.takenAtH &&
          !m.fatal &&
          m.trueRate >= o.minRate &&
          // A host preempted before it would prove is no host at all.
          !(m.preemptAfterH !== null && m.preemptAfterH <= o.bootH),
      )
      .sort((a, b) => b.trueRate / b.billedDph - a.trueRate / a.billedDph || a.offer.id - b.offer.id);
    for (const m of candidates) {
      if (rate >= o.targetRate || count >= o.maxInstances) break;
      if (dph + m.billedDph > o.maxDph + 1e-9) continue;
      held.push({ m, rentedAtH: t, releasedAtH: null });
      rentedIds.add(m.offer.id);
      rate += m.trueRate;
      dph += m.billedDph;
      count++;
    }
    let producing = 0;
    for (const h of held) {
      if (h.releasedAtH !== null) continue;
      const s = stateAt(h, t, o.bootH)!;
      if (s.rate > 0) {
        productionDollars += s.dph * step;
        proofs += s.rate * step;
        producing += s.rate;
      } else bootDollars += s.dph * step;
    }
    if (timeToTargetH === null && producing >= o.targetRate) timeToTargetH = t;
  }
  const dollars = bootDollars + productionDollars;
  return {
    dollars,
    bootDollars,
    productionDollars,
    proofs,
    dollarsPerProof: proofs > 0 ? dollars / proofs : null,
    timeToTargetH,
    rented: [...rentedIds],
  };
}

/** The oracle for the market day's fleet (MARKET_PARAMS.fleet) over `horizonH` hours. */
export function fleetOracle(market: MarketOffer[], horizonH: number): OracleResult {
  const F = MARKET_PARAMS.fleet;
  return oracle(market, {
    targetRate: F.targetRate.value,
    maxDph: F.maxDph.value,
    maxInstances: F.maxInstances.value,
    minRate: F.minRate.value,
    bootH: F.bootSec.value / 3600,
    horizonH,
  });
}
