import type { FleetNow, FleetTarget } from './offer-ranking.js';

/** A store row of a rental still rented (promoted, or no verdict yet). */
export interface OpenRentalRow {
  rentalKey: string;
  workflowId: string;
  outcome: string | null;
  benchRate: number | null;
  dphTotal: number | null;
  /** The bid of an interruptible rental ($/h); null or absent for on-demand. */
  bidDph?: number | null;
}

/** A running lifecycle and its rental's key. */
export interface RunningRentalKey {
  workflowId: string;
  rentalKey: string;
}

/**
 * The fleet as the scaler counts it, each rental once: a workflow id names an offer and is reused when
 * the offer is rented again, so rows and running lifecycles are matched by rental key, never by id.
 * Promoted rentals count with their rate and price; rentals without a verdict count only while their
 * lifecycle runs (a row left by a terminated lifecycle is the reconciler's); a running lifecycle that has
 * not written its row yet still takes a benchmark slot.
 */
export function fleetFigures(rows: readonly OpenRentalRow[], running: readonly RunningRentalKey[]): FleetNow {
  const runningKeys = new Set(running.map((r) => r.rentalKey));
  const rowKeys = new Set(rows.map((r) => r.rentalKey));
  const kind = (r: OpenRentalRow) => (r.bidDph !== null && r.bidDph !== undefined ? { interruptible: true } : {});
  return {
    promoted: rows
      .filter((r) => r.outcome === 'promoted')
      .map((r) => ({ rate: r.benchRate ?? 0, dph: r.dphTotal ?? 0, ...kind(r) })),
    inFlight: [
      ...rows
        .filter((r) => r.outcome === null && runningKeys.has(r.rentalKey))
        .map((r) => ({ dph: r.dphTotal ?? 0, predictedRate: null, ...kind(r) })),
      ...running.filter((r) => !rowKeys.has(r.rentalKey)).map(() => ({ dph: 0, predictedRate: null })),
    ],
  };
}

/** The fleet figures a scaler run decided on, in real units (rates proofs/h, prices $/h). */
export interface DecidedFigures {
  /** What the promoted instances prove (their measured rates). */
  proofsPerHour: number;
  /** What every rented instance bills, benchmarking ones included. */
  dollarsPerHour: number;
  /** The fleet's hourly bill over what it proves; null while nothing is promoted. */
  dollarsPerProof: number | null;
  promoted: number;
  benchmarking: number;
  targetProofsPerHour: number;
  budgetDollarsPerHour: number;
  minRateProofsPerHour: number;
}

export function decidedFigures(now: FleetNow, t: FleetTarget): DecidedFigures {
  const rate = now.promoted.reduce((s, p) => s + p.rate, 0);
  const dph = [...now.promoted, ...now.inFlight].reduce((s, p) => s + p.dph, 0);
  return {
    proofsPerHour: Math.round(rate * 100) / 100,
    dollarsPerHour: Math.round(dph * 1e6) / 1e6,
    dollarsPerProof: rate > 0 ? Math.round((dph / rate) * 1e6) / 1e6 : null,
    promoted: now.promoted.length,
    benchmarking: now.inFlight.length,
    targetProofsPerHour: t.targetRate,
    budgetDollarsPerHour: t.maxDph,
    minRateProofsPerHour: t.minRate,
  };
}
