import type { FleetTarget, OfferCandidate } from './offer-ranking.js';
import { type PerfSample, predictRate, rateAt, type RatePrediction } from './predictions.js';

/** An offer with what we expect of it per billed dollar. */
export interface ValuedOffer extends OfferCandidate {
  prediction: RatePrediction;
  /** Proofs/h expected (the prediction's median). */
  predictedRate: number;
  /** Proofs/h at the upper confidence bound (`UCB_Z` sds of what we do not know). */
  upperRate: number;
  /** Upper-bound proofs/h per billed $/h: the rank. */
  score: number;
  source: RatePrediction['source'];
}

/**
 * The upper confidence bound's width, in sds of ln(rate): the 84 % quantile. Bayes-UCB (Kaufmann,
 * Cappé and Garivier, 2012) ranks by the 1 - 1/t quantile at the t-th choice; it is fixed here at
 * t ~ 6, so a run's ranking depends only on what is known, not on how many runs came before.
 */
export const UCB_Z = 1;

/** Why the ranking passed an offer over; under `minRate`, with the figures that put it there. */
export type PassedOver =
  | { why: 'not rentable' | 'free' | 'same machine' }
  | { why: 'under min rate'; prediction: RatePrediction; upperRate: number };

/**
 * Ranks offers by the upper confidence bound of their proofs/h per billed dollar: an offer whose kind
 * is well known ranks by what it proves, one little known by what it might, so the scaler tries what
 * could be best rather than what is cheapest, and stops trying a kind once its benchmarks rule it out.
 * A UCB rule rather than Thompson sampling: the same inputs give the same ranking (workflow code must be
 * deterministic), without a seeded RNG in history. One offer per machine; bad or resting machines,
 * free offers, machines whose own benchmark was under `minRate` and kinds that cannot reach it even at
 * their upper bound are left out.
 */
export function rankByValue<O extends OfferCandidate>(
  offers: readonly O[],
  samples: readonly PerfSample[],
  notRentable: readonly number[],
  minRate: number,
): Array<ValuedOffer & O> {
  return valueOffers(offers, samples, notRentable, minRate).ranked;
}

/**
 * `rankByValue`, and each offer it passes over with why (the operator's preview names them). A machine's
 * later offers are passed over once its first was judged: as the same machine when the first was ranked,
 * else by their own figures.
 */
export function valueOffers<O extends OfferCandidate>(
  offers: readonly O[],
  samples: readonly PerfSample[],
  notRentable: readonly number[],
  minRate: number,
): { ranked: Array<ValuedOffer & O>; passedOver: Array<{ offer: O } & PassedOver> } {
  const skip = new Set(notRentable);
  // One physical machine at a time: its offers are slices of the same hardware.
  const seen = new Map<number, boolean>();
  const ranked: Array<ValuedOffer & O> = [];
  const passedOver: Array<{ offer: O } & PassedOver> = [];
  for (const o of offers) {
    if (skip.has(o.machineId)) passedOver.push({ offer: o, why: 'not rentable' });
    else if (!(o.dphTotal > 0)) passedOver.push({ offer: o, why: 'free' });
    else {
      const p = predictRate(o, samples);
      const upper = rateAt(p, UCB_Z);
      const under = p.source === 'machine' ? p.rate < minRate : upper < minRate;
      // Whether the machine's first offer was ranked; undefined for its first.
      const firstRanked = seen.get(o.machineId);
      if (firstRanked === undefined) seen.set(o.machineId, !under);
      if (firstRanked === true) passedOver.push({ offer: o, why: 'same machine' });
      else if (under) passedOver.push({ offer: o, why: 'under min rate', prediction: p, upperRate: upper });
      else if (firstRanked === false) passedOver.push({ offer: o, why: 'same machine' });
      else
        ranked.push({
          ...o,
          prediction: p,
          predictedRate: p.rate,
          upperRate: upper,
          score: upper / o.dphTotal,
          source: p.source,
        });
    }
  }
  return { ranked: ranked.sort((a, b) => b.score - a.score || a.offerId - b.offerId), passedOver };
}

/** The fleet now: promoted hosts at their measured rate, rentals in flight at their expected rate. */
export interface PortfolioNow {
  promoted: ReadonlyArray<{ rate: number; dph: number }>;
  inFlight: ReadonlyArray<{ dph: number; predictedRate: number | null }>;
}

export type PortfolioTarget = Pick<
  FleetTarget,
  | 'targetRate'
  | 'maxDph'
  | 'maxInstances'
  | 'maxConcurrentBenchmarks'
  | 'minRate'
  | 'explorationSlots'
  | 'explorationDph'
>;

/**
 * Offers to rent now, best bound first: below the target `fillPortfolio`; at it, with no benchmark running,
 * one `replacement`.
 */
export function choosePortfolio<O extends ValuedOffer>(
  ranked: readonly O[],
  now: PortfolioNow,
  t: PortfolioTarget,
  rebalanceFactor: number,
): O[] {
  const f = fleetOf(now);
  if (f.rate < t.targetRate) return fillPortfolio(ranked, now, t);
  return f.benchmarks > 0 ? [] : replacement(ranked, now, (o) => fits(f, t, o), rebalanceFactor);
}

/**
 * Below the target: until the fleet's expected rate (promoted hosts at their measured rate, rentals in flight
 * at their expected one) reaches it, within the budget and the instance and benchmark caps. Each offer counts
 * with what it is expected to prove, so while the fleet is far from the target several kinds are tried at
 * once and near it one. Kinds something is known of come first; a model nobody has measured (the generic
 * prior, wide) takes a benchmark slot left over, at most `explorationSlots` per run (and `explorationDph`).
 * At or above the target: nothing.
 */
export function fillPortfolio<O extends ValuedOffer>(ranked: readonly O[], now: PortfolioNow, t: PortfolioTarget): O[] {
  const f = fleetOf(now);
  const chosen: O[] = [];
  const take = (o: O) => {
    chosen.push(o);
    f.rate += o.predictedRate;
    f.dph += o.dphTotal;
    f.instances++;
    f.benchmarks++;
  };
  const open = () => f.rate < t.targetRate && hasRoom(f, t);
  for (const o of ranked) if (open() && o.source !== 'unknown' && fits(f, t, o)) take(o);
  let unknown = 0;
  let unknownDph = 0;
  for (const o of ranked) {
    if (!open() || unknown >= t.explorationSlots) break;
    if (o.source !== 'unknown' || !fits(f, t, o)) continue;
    if (t.explorationDph !== undefined && unknownDph + o.dphTotal > t.explorationDph + 1e-9) continue;
    unknown++;
    unknownDph += o.dphTotal;
    take(o);
  }
  return chosen;
}

interface Figures {
  rate: number;
  dph: number;
  instances: number;
  benchmarks: number;
}

const fleetOf = (now: PortfolioNow): Figures => ({
  rate: sum(now.promoted.map((p) => p.rate)) + sum(now.inFlight.map((x) => x.predictedRate ?? 0)),
  dph: sum(now.promoted.map((p) => p.dph)) + sum(now.inFlight.map((x) => x.dph)),
  instances: now.promoted.length + now.inFlight.length,
  benchmarks: now.inFlight.length,
});

const fits = (f: Figures, t: PortfolioTarget, o: ValuedOffer) => f.dph + o.dphTotal <= t.maxDph + 1e-9 && hasRoom(f, t);

const hasRoom = (f: { instances: number; benchmarks: number }, t: PortfolioTarget) =>
  f.instances < t.maxInstances && f.benchmarks < t.maxConcurrentBenchmarks;

/**
 * At the target, with no benchmark running: the best-ranked offer that could cost `rebalanceFactor` times
 * less per proof than the dearest promoted host (at its upper bound: this is where the fleet explores once
 * it has what it needs, one rental at a time). Promoted, it lets rebalancing retire the dearest.
 */
function replacement<O extends ValuedOffer>(
  ranked: readonly O[],
  now: PortfolioNow,
  fits: (o: O) => boolean,
  rebalanceFactor: number,
): O[] {
  if (now.promoted.length === 0) return [];
  const dearest = Math.max(...now.promoted.map((p) => p.dph / Math.max(p.rate, 1e-9)));
  const better = ranked.find((o) => fits(o) && (o.dphTotal / o.upperRate) * rebalanceFactor <= dearest);
  return better ? [better] : [];
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
