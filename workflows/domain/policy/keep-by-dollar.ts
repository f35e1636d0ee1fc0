/**
 * Keep by the dollar, and rebalance: a host that proves fast enough is kept only while what it costs per
 * proof is near the best the fleet has; a clearly dearer one ends with a market verdict (inconclusive,
 * nothing marked: the host did nothing wrong, a better deal exists).
 */

/** A promoted host as the fleet counts it: its measured proofs/h and billed $/h. */
export interface KeptHost {
  key: string;
  rate: number;
  dph: number;
}

/**
 * A host that reaches minRate is kept if its $ per proof is at most this many times the fleet's best.
 * Measured reason: the evaluator's tuned seeds (docs/benchmarks.md), where the best hosts' kinds are
 * listed all day at about half the $ per proof of the typical healthy host.
 */
export const KEEP_COST_FACTOR = 2;

/**
 * "Clearly cheaper" for a rebalance: a host must cost at most 1 / this of the dearest kept host's $ per
 * proof to replace it. Measured reason as above; above the prediction's spread between hosts of one kind
 * (HOST_LOG_SD 0.2: e^0.4 ~ 1.5 is two of its sds).
 */
export const REBALANCE_FACTOR = 1.5;

export const costPerProof = (h: { rate: number; dph: number }): number => h.dph / Math.max(h.rate, 1e-9);

/**
 * The market ending of a host kept off or retired for its price per proof (keep by the dollar, rebalance):
 * inconclusive, marks nothing, the machine may be rented again when it is the better deal.
 */
export const PRICED_OUT = 'PricedOut';

export type KeepDecision =
  { keep: true } | { keep: false; costPerProof: number; bestCostPerProof: number; factor: number };

/**
 * At the verdict: a host at or above minRate is kept unless its $ per proof is over `factor` times the
 * cheapest the fleet's promoted hosts prove at. With no promoted host there is nothing to compare: kept.
 */
export function keepByDollar(
  host: { rate: number; dph: number },
  promoted: ReadonlyArray<{ rate: number; dph: number }>,
  factor: number = KEEP_COST_FACTOR,
): KeepDecision {
  if (promoted.length === 0) return { keep: true };
  const best = Math.min(...promoted.map(costPerProof));
  const mine = costPerProof(host);
  return mine <= factor * best + 1e-12
    ? { keep: true }
    : { keep: false, costPerProof: mine, bestCostPerProof: best, factor };
}

/**
 * Rebalancing: the promoted hosts to retire now, dearest per proof first, while the fleet without it still
 * reaches the target and it costs at least `factor` times the cheapest host per proof. A cheaper host
 * promoted beside a full fleet is what makes the dearest one retire; the fleet never goes under target.
 */
export function retirements(hosts: readonly KeptHost[], targetRate: number, factor: number = REBALANCE_FACTOR) {
  const sorted = [...hosts].sort((a, b) => costPerProof(b) - costPerProof(a) || a.key.localeCompare(b.key));
  const best = Math.min(...hosts.map(costPerProof));
  let rate = hosts.reduce((s, h) => s + h.rate, 0);
  const out: Array<KeptHost & { costPerProof: number; bestCostPerProof: number }> = [];
  for (const h of sorted) {
    const c = costPerProof(h);
    if (c < factor * best) break;
    // This one is needed for the target; a smaller dear one after it may not be.
    if (rate - h.rate < targetRate) continue;
    rate -= h.rate;
    out.push({ ...h, costPerProof: c, bestCostPerProof: best });
  }
  return out;
}
