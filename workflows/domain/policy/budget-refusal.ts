import type { FleetNow, FleetTarget } from './offer-ranking.js';

/** An offer as the budget sees it: its price and what it is expected to prove. */
export interface PricedOffer {
  offerId: number;
  dphTotal: number;
  predictedRate: number | null;
}

/**
 * True when the fleet is below its target rate, has room under its instance and benchmark caps, and a
 * ranked offer was passed over only because renting it would exceed the $/h budget: the budget, not
 * the market, is what keeps the fleet short. Operators want to know (raise the budget or the target).
 */
export function refusedByBudget(
  candidates: readonly PricedOffer[],
  chosen: readonly PricedOffer[],
  now: FleetNow,
  t: FleetTarget,
): boolean {
  const all = [...now.promoted, ...now.inFlight];
  const picked = new Set(chosen.map((o) => o.offerId));
  const rate =
    now.promoted.reduce((s, p) => s + p.rate, 0) +
    now.inFlight.reduce((s, f) => s + (f.predictedRate ?? 0), 0) +
    chosen.reduce((s, o) => s + (o.predictedRate ?? 0), 0);
  const dph = all.reduce((s, p) => s + p.dph, 0) + chosen.reduce((s, o) => s + o.dphTotal, 0);
  if (rate >= t.targetRate) return false;
  if (all.length + chosen.length >= t.maxInstances) return false;
  if (now.inFlight.length + chosen.length >= t.maxConcurrentBenchmarks) return false;
  return candidates.some((o) => !picked.has(o.offerId) && dph + o.dphTotal > t.maxDph + 1e-9);
}
