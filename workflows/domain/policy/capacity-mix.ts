import { z } from 'zod';
import { bidFor } from './bid.js';
import {
  chooseOffers,
  type FleetNow,
  type FleetTarget,
  type OfferCandidate,
  type RankedOffer,
} from './offer-ranking.js';
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

type Ranked = { known: RankedOffer[]; explore: RankedOffer[] };
export type MixedChoice = RankedOffer & { interruptible: boolean };

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

const minus = (r: Ranked, taken: readonly MixedChoice[]): Ranked => {
  const ids = new Set(taken.map((o) => o.offerId));
  const machines = new Set(taken.map((o) => o.machineId));
  const keep = (o: RankedOffer) => !ids.has(o.offerId) && !machines.has(o.machineId);
  return { known: r.known.filter(keep), explore: r.explore.filter(keep) };
};

/**
 * Picks offers for the mixed policy within the one budget and caps: on-demand up to the floor, then
 * interruptible toward the target, then on-demand for any rate still missing. One machine is rented once.
 */
export function chooseMixed(
  onDemand: Ranked,
  interruptible: Ranked,
  now: FleetNow,
  t: FleetTarget,
  mix: CapacityMix,
): MixedChoice[] {
  const tag = (list: RankedOffer[], spot: boolean) => list.map((o) => ({ ...o, interruptible: spot }));
  const countExplore = (c: MixedChoice[]) => c.filter((o) => o.source === 'explore').length;
  // Stop on-demand where its own rate reaches the floor (the target counts the whole fleet's rate).
  const floorTarget = Math.min(t.targetRate, mix.onDemandFloorRate + rateOf(now, true));
  const a = tag(chooseOffers(onDemand, now, { ...t, targetRate: floorTarget }), false);
  let slots = t.explorationSlots - countExplore(a);
  const b = tag(
    chooseOffers(minus(interruptible, a), plus(now, a), { ...t, explorationSlots: Math.max(0, slots) }),
    true,
  );
  slots -= countExplore(b);
  const c = tag(
    chooseOffers(minus(onDemand, [...a, ...b]), plus(now, [...a, ...b]), {
      ...t,
      explorationSlots: Math.max(0, slots),
    }),
    false,
  );
  return [...a, ...b, ...c];
}

/** Parses a schedule's `capacity` input; the message names the field and what it accepts. */
export function parseCapacityMix(value: unknown): { ok: true; mix: CapacityMix } | { ok: false; error: string } {
  const r = CapacityMixSchema.safeParse(value);
  if (r.success) return { ok: true, mix: r.data };
  return { ok: false, error: r.error.issues.map((i) => `capacity.${i.path.join('.')}: ${i.message}`).join('; ') };
}
