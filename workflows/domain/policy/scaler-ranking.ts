import { type OfferCandidate, type PerfHistory, rankOffers, type RankedOffer } from './offer-ranking.js';

/**
 * The scaler's ranking for one run: offers an open rental already holds are left out (one rental per
 * offer), machines marked bad or resting are passed over, the rest ranked by what past benchmarks
 * predict per dollar (rankOffers). The fleet-scaler workflow and the policy evaluator both call it.
 */
export function rankForRun(
  offers: readonly OfferCandidate[],
  rented: ReadonlyArray<{ offerId: number }>,
  perf: PerfHistory,
  notRentable: readonly number[],
  minRate: number,
): { known: RankedOffer[]; explore: RankedOffer[] } {
  const busy = new Set(rented.map((r) => r.offerId));
  return rankOffers(
    offers.filter((o) => !busy.has(o.offerId)),
    perf,
    notRentable,
    minRate,
  );
}
