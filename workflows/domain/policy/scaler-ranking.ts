import type { OpenRentalRow, RunningRentalKey } from './fleet-figures.js';
import type { KeptHost } from './keep-by-dollar.js';
import { type OfferCandidate, type PerfHistory, rankOffers, type RankedOffer } from './offer-ranking.js';
import { type PerfSample, predictRate } from './predictions.js';
import { rankByValue, type ValuedOffer } from './value-ranking.js';

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

/** A store row of an open rental with the hardware of its offer (the instances row's columns). */
export interface OpenRentalWithHardware extends OpenRentalRow {
  machineId: number;
  gpuName: string;
  numGpus: number;
  cpuRamMb: number;
}

/**
 * The fleet as the portfolio counts it: promoted hosts with their key, measured rate and price; rentals
 * without a verdict while their lifecycle runs, at the rate their hardware is expected to prove (a
 * running lifecycle without a row yet takes a benchmark slot and counts nothing).
 */
export function portfolioFleet(
  rows: readonly OpenRentalWithHardware[],
  running: readonly RunningRentalKey[],
  samples: readonly PerfSample[],
): { promoted: KeptHost[]; inFlight: Array<{ dph: number; predictedRate: number | null }> } {
  const runningKeys = new Set(running.map((r) => r.rentalKey));
  const rowKeys = new Set(rows.map((r) => r.rentalKey));
  return {
    promoted: rows
      .filter((r) => r.outcome === 'promoted')
      .map((r) => ({ key: r.rentalKey, rate: r.benchRate ?? 0, dph: r.dphTotal ?? 0 })),
    inFlight: [
      ...rows
        .filter((r) => r.outcome === null && runningKeys.has(r.rentalKey))
        .map((r) => ({ dph: r.dphTotal ?? 0, predictedRate: predictRate(r, samples).rate })),
      ...running.filter((r) => !rowKeys.has(r.rentalKey)).map(() => ({ dph: 0, predictedRate: null })),
    ],
  };
}

/**
 * The scaler's ranking by value for one run: offers an open rental holds left out, bad and resting
 * machines passed over, the rest by the upper bound of their proofs/h per dollar (rankByValue).
 */
export function rankForRunByValue(
  offers: readonly OfferCandidate[],
  rented: ReadonlyArray<{ offerId: number }>,
  samples: readonly PerfSample[],
  notRentable: readonly number[],
  minRate: number,
): ValuedOffer[] {
  const busy = new Set(rented.map((r) => r.offerId));
  return rankByValue(
    offers.filter((o) => !busy.has(o.offerId)),
    samples,
    notRentable,
    minRate,
  );
}
