import type { OpenRentalRow, RunningRentalKey } from './fleet-figures.js';
import type { KeptHost } from './keep-by-dollar.js';
import type { OfferCandidate } from './offer-ranking.js';
import { type PerfSample, predictRate } from './predictions.js';
import { type PassedOver, rankByValue, type ValuedOffer, valueOffers } from './value-ranking.js';

/**
 * A store row of an open rental with the hardware of its offer (the instances row's columns). A lifecycle
 * writes them when it rents, so a row written before that lacks them (null): it counts with no prediction.
 */
export interface OpenRentalWithHardware extends OpenRentalRow {
  machineId: number | null;
  gpuName: string | null;
  numGpus: number | null;
  cpuRamMb: number | null;
}

/** The portfolio's hosts; `interruptible` marks a bid rental, which the capacity mix counts apart. */
export interface PortfolioFleet {
  promoted: Array<KeptHost & { interruptible?: boolean }>;
  inFlight: Array<{ dph: number; predictedRate: number | null; interruptible?: boolean }>;
}

/**
 * The fleet as the portfolio counts it: promoted hosts with their key, measured rate and price; rentals
 * without a verdict while their lifecycle runs, at the rate their hardware is expected to prove (a
 * running lifecycle without a row yet, or a row without its hardware yet, takes a benchmark slot and counts
 * nothing). Each rental once, matched by rental key (fleet-figures.ts).
 */
export function portfolioFleet(
  rows: readonly OpenRentalWithHardware[],
  running: readonly RunningRentalKey[],
  samples: readonly PerfSample[],
): PortfolioFleet {
  const runningKeys = new Set(running.map((r) => r.rentalKey));
  const rowKeys = new Set(rows.map((r) => r.rentalKey));
  const kind = (r: OpenRentalRow) => (r.bidDph !== null && r.bidDph !== undefined ? { interruptible: true } : {});
  return {
    promoted: rows
      .filter((r) => r.outcome === 'promoted')
      .map((r) => ({ key: r.rentalKey, rate: r.benchRate ?? 0, dph: r.dphTotal ?? 0, ...kind(r) })),
    inFlight: [
      ...rows
        .filter((r) => r.outcome === null && runningKeys.has(r.rentalKey))
        .map((r) => ({ dph: r.dphTotal ?? 0, predictedRate: expectedRate(r, samples), ...kind(r) })),
      ...running.filter((r) => !rowKeys.has(r.rentalKey)).map(() => ({ dph: 0, predictedRate: null })),
    ],
  };
}

function expectedRate(r: OpenRentalWithHardware, samples: readonly PerfSample[]): number | null {
  const { machineId, gpuName, numGpus, cpuRamMb } = r;
  if (machineId === null || gpuName === null || numGpus === null || cpuRamMb === null) return null;
  return predictRate({ machineId, gpuName, numGpus, cpuRamMb }, samples).rate;
}

/**
 * The scaler's ranking by value for one run: offers an open rental holds left out, bad and resting
 * machines passed over, the rest by the upper bound of their proofs/h per dollar (rankByValue). The
 * fleet-scaler workflow and the policy evaluator both call it, with on-demand and with bid candidates.
 */
export function rankForRunByValue<O extends OfferCandidate>(
  offers: readonly O[],
  rented: ReadonlyArray<{ offerId: number }>,
  samples: readonly PerfSample[],
  notRentable: readonly number[],
  minRate: number,
): Array<ValuedOffer & O> {
  const busy = new Set(rented.map((r) => r.offerId));
  return rankByValue(
    offers.filter((o) => !busy.has(o.offerId)),
    samples,
    notRentable,
    minRate,
  );
}

/** Why the ranking left an offer out (the scaler passes it over for the same reason). */
export type LeftOutReason = 'rented' | 'bad' | 'resting' | 'free' | 'same machine' | 'under min rate';

/** An offer the preview names beside the ranking: what it is, why it is out, and for `under min rate` its figures. */
export interface LeftOutOffer extends OfferCandidate {
  reason: LeftOutReason;
  predictedRate?: number;
  upperRate?: number;
  source?: ValuedOffer['source'];
}

/**
 * The operator's preview (`gpu-fleet offers`): the scaler's own ranking (rankForRunByValue on the same
 * inputs), and each offer it left out with why, so the preview cannot order offers otherwise than the
 * scaler rents them and an absent offer is never unexplained.
 */
export function offerPreview<O extends OfferCandidate>(
  offers: readonly O[],
  rented: ReadonlyArray<{ offerId: number }>,
  samples: readonly PerfSample[],
  out: { bad: readonly number[]; resting: readonly number[] },
  minRate: number,
): { ranked: Array<ValuedOffer & O>; leftOut: LeftOutOffer[] } {
  // rankForRunByValue's steps, keeping what each leaves out.
  const busy = new Set(rented.map((r) => r.offerId));
  const { ranked, passedOver } = valueOffers(
    offers.filter((o) => !busy.has(o.offerId)),
    samples,
    [...out.bad, ...out.resting],
    minRate,
  );
  const why = new Map<number, Omit<LeftOutOffer, keyof OfferCandidate>>();
  for (const o of offers) if (busy.has(o.offerId)) why.set(o.offerId, { reason: 'rented' });
  for (const p of passedOver) why.set(p.offer.offerId, leftOutReason(p, out.bad));
  const leftOut = offers.filter((o) => why.has(o.offerId)).map((o) => ({ ...candidateOf(o), ...why.get(o.offerId)! }));
  return { ranked, leftOut };
}

function leftOutReason(p: PassedOver & { offer: OfferCandidate }, bad: readonly number[]) {
  if (p.why === 'not rentable') return { reason: bad.includes(p.offer.machineId) ? 'bad' : 'resting' } as const;
  if (p.why !== 'under min rate') return { reason: p.why };
  return { reason: p.why, predictedRate: p.prediction.rate, upperRate: p.upperRate, source: p.prediction.source };
}

/** The candidate's own fields, without whatever else the search row carries. */
function candidateOf(o: OfferCandidate): OfferCandidate {
  const { offerId, machineId, gpuName, numGpus, cpuRamMb, dphTotal, searchedDph } = o;
  return {
    offerId,
    machineId,
    gpuName,
    numGpus,
    cpuRamMb,
    dphTotal,
    ...(searchedDph !== undefined ? { searchedDph } : {}),
  };
}
