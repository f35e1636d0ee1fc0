import { z } from 'zod';
import { bidFor } from './bid.js';
import type { FleetNow, FleetTarget, OfferCandidate } from './offer-ranking.js';
import { choosePortfolio, fillPortfolio, type ValuedOffer } from './value-ranking.js';
import type { BidPolicy, OfferFacts } from '../types.js';

/**
 * The scaler's mix of on-demand and interruptible capacity (schedule input `capacity`): on-demand
 * rentals carry the fleet up to `onDemandFloorRate`; above it the scaler rents interruptible instances
 * at a bid, and on-demand again only when no interruptible offer fits. Rates are proofs/h in workflow
 * units, like `targetRate`; prices $/h.
 */
export const CapacityMixSchema = z
  .object({
    /** Proofs/h the on-demand part of the fleet must carry before any interruptible rental. */
    onDemandFloorRate: z.number().min(0),
    /** Bid this far above min_bid, in percent. */
    bidMarginPct: z.number().min(0).max(1000),
    /** Never bid above this fraction of the offer's on-demand compute price (0 < f <= 1). */
    maxBidFraction: z.number().gt(0).max(1),
    /** Create attempts at a higher bid after Vast calls a bid too low. */
    rebids: z.number().int().min(0).max(5),
  })
  .strict();
export type CapacityMix = z.infer<typeof CapacityMixSchema>;

/** The failure type of a scaler run whose schedule input is invalid (not a lifecycle ending). */
export const INVALID_SCALER_INPUT = 'InvalidScalerInput';

export const DEFAULT_CAPACITY_MIX: Omit<CapacityMix, 'onDemandFloorRate'> = {
  bidMarginPct: 15,
  maxBidFraction: 0.8,
  rebids: 1,
};

/** Storage $/h of an offer for the disk we rent (Vast bills storage by the month: GB × $/GB/month / 720). */
const storageDph = (o: OfferFacts, diskGb: number) => (diskGb * (o.storageCost ?? 0)) / 720;

/** An interruptible candidate: the offer priced at the bid we would place, and the policy to bid by. */
export interface BidCandidate extends OfferCandidate {
  bid: BidPolicy & { priceDph: number };
}

/**
 * Offers from a `type: "bid"` search priced as interruptible rentals: bid = min_bid × (1 + margin),
 * capped at `maxBidFraction` of the on-demand compute price; `dphTotal` becomes the bid plus storage,
 * what Vast will bill. Offers without a min_bid, or whose bid would pass the cap, are left out.
 */
export function bidCandidates(offers: readonly OfferFacts[], mix: CapacityMix, diskGb: number): BidCandidate[] {
  const out: BidCandidate[] = [];
  for (const o of offers) {
    if (typeof o.minBid !== 'number' || !(o.minBid > 0)) continue;
    const storage = storageDph(o, diskGb);
    const maxBidDph = Math.floor((o.dphTotal - storage) * mix.maxBidFraction * 1000) / 1000;
    const policy: BidPolicy = { marginPct: mix.bidMarginPct, maxBidDph, rebids: mix.rebids };
    const priceDph = bidFor(o.minBid, policy, o.numGpus);
    if (priceDph === null) continue;
    out.push({ ...o, dphTotal: Math.round((priceDph + storage) * 1e6) / 1e6, bid: { ...policy, priceDph } });
  }
  return out;
}

export type MixedChoice = ValuedOffer & { interruptible: boolean };

const rateOf = (n: FleetNow, interruptible: boolean) =>
  n.promoted.filter((p) => !!p.interruptible === interruptible).reduce((s, p) => s + p.rate, 0) +
  n.inFlight.filter((f) => !!f.interruptible === interruptible).reduce((s, f) => s + (f.predictedRate ?? 0), 0);

const plus = (n: FleetNow, chosen: MixedChoice[]): FleetNow => ({
  promoted: n.promoted,
  inFlight: [
    ...n.inFlight,
    ...chosen.map((o) => ({ dph: o.dphTotal, predictedRate: o.predictedRate, interruptible: o.interruptible })),
  ],
});

const minus = (r: readonly MixedChoice[], taken: readonly MixedChoice[]): MixedChoice[] => {
  const ids = new Set(taken.map((o) => o.offerId));
  const machines = new Set(taken.map((o) => o.machineId));
  return r.filter((o) => !ids.has(o.offerId) && !machines.has(o.machineId));
};

/** What exploration the next part may still do: the run's slots and $/h less what earlier parts took. */
const exploreLeft = (t: FleetTarget, chosen: readonly MixedChoice[]): FleetTarget => {
  const unknown = chosen.filter((o) => o.source === 'unknown');
  const dph = unknown.reduce((s, o) => s + o.dphTotal, 0);
  return {
    ...t,
    explorationSlots: Math.max(0, t.explorationSlots - unknown.length),
    ...(t.explorationDph === undefined ? {} : { explorationDph: Math.max(0, t.explorationDph - dph) }),
  };
};

/**
 * Picks offers for the mixed policy within the one budget and caps, each list ranked by value
 * (rankForRunByValue): on-demand up to the floor, then interruptible toward the target, then on-demand for
 * any rate still missing (each part as `fillPortfolio`). One machine is rented once. At the target, the one
 * replacement `choosePortfolio` allows, from either list.
 */
export function chooseMixed(
  onDemand: readonly ValuedOffer[],
  interruptible: readonly ValuedOffer[],
  now: FleetNow,
  t: FleetTarget,
  mix: CapacityMix,
  rebalanceFactor: number,
): MixedChoice[] {
  const od = onDemand.map((o) => ({ ...o, interruptible: false }));
  const spot = interruptible.map((o) => ({ ...o, interruptible: true }));
  if (rateOf(now, false) + rateOf(now, true) >= t.targetRate) {
    const both = [...od, ...spot].sort((a, b) => b.score - a.score || a.offerId - b.offerId);
    return choosePortfolio(both, now, t, rebalanceFactor);
  }
  // Stop on-demand where its own rate reaches the floor (the target counts the whole fleet's rate).
  const floorTarget = Math.min(t.targetRate, mix.onDemandFloorRate + rateOf(now, true));
  const a = fillPortfolio(od, now, { ...t, targetRate: floorTarget });
  const b = fillPortfolio(minus(spot, a), plus(now, a), exploreLeft(t, a));
  const c = fillPortfolio(minus(od, [...a, ...b]), plus(now, [...a, ...b]), exploreLeft(t, [...a, ...b]));
  return [...a, ...b, ...c];
}

/** Parses a schedule's `capacity` input; the message names the field and what it accepts. */
export function parseCapacityMix(value: unknown): { ok: true; mix: CapacityMix } | { ok: false; error: string } {
  const r = CapacityMixSchema.safeParse(value);
  if (r.success) return { ok: true, mix: r.data };
  return { ok: false, error: r.error.issues.map((i) => `capacity.${i.path.join('.')}: ${i.message}`).join('; ') };
}
