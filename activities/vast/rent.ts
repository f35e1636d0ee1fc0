import { sleep } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../workflows/domain/failures.js';
import type { BidPolicy, RentedInstance } from '../../workflows/domain/types.js';
import { rentWithBid } from './bids.js';
import { call } from './call.js';
import type { VastClient } from './client.js';
import type { VastActivityDeps } from './deps.js';
import { destroyAndConfirm } from './destroy.js';
import { hostEnvFor } from './host-env.js';
import { tokenExpiry } from './host-token-expiry.js';
import { factsFromInstance, offerFacts } from './offer-facts.js';
import { billedDph } from './pricing.js';
import { adopt, afterFailedCreate, findByLabel } from './rent-adopt.js';
import type { Offer } from './schemas.js';

export interface RentOfferInput {
  offerId: number;
  label: string;
  image: string;
  diskGb: number;
  hostTaskQueue: string;
  /** Rent as an interruptible instance, bidding by this policy (absent: on-demand). */
  bid?: BidPolicy;
}

/** One create of the offer, as the rent has prepared it. */
interface Creation {
  input: RentOfferInput;
  offer: Offer;
  /** The instance's env; it holds the host token, which only the instance may see. */
  env: Record<string, string>;
  create: (priceDph?: number) => Promise<number>;
  reread: () => Promise<Offer | undefined>;
}

/**
 * Re-reads the offer priced for our disk, then rents it and reads the price Vast bills on the
 * instance. Idempotent by label: a retry after a lost answer finds the instance it already created
 * instead of renting a second one, and so does any create whose outcome is uncertain (no answer, a
 * garbled one, an error that may have raced a late request).
 */
export async function rentOffer(deps: VastActivityDeps, input: RentOfferInput): Promise<RentedInstance> {
  const mine = await call(() => findByLabel(deps.vast, input.label));
  const reread = () => rereadOffer(deps.vast, input);
  const offer = await reread();
  if (mine) {
    // RAM is the renter's share either way: from the offer, or from the instance's own cores.
    const facts = offer ? offerFacts(offer, input.diskGb) : factsFromInstance(input.offerId, mine);
    return adopt(deps, mine, facts, input.bid);
  }
  if (!offer) {
    throw ApplicationFailure.create({
      type: FailureType.OfferUnavailable,
      message: `offer ${input.offerId} is no longer listed as rentable`,
      nonRetryable: true,
      details: [{ offerId: input.offerId }],
    });
  }
  const env = hostEnvFor(deps, input);
  const create = (price?: number) =>
    deps.vast.createInstance(input.offerId, {
      image: input.image,
      disk: input.diskGb,
      label: input.label,
      env,
      ...(price === undefined ? {} : { price }),
    });
  const creation: Creation = { input, offer, env, create, reread };
  try {
    return input.bid
      ? await rentInterruptible(deps.vast, creation, input.bid)
      : await rentOnDemand(deps.vast, creation);
  } catch (err) {
    // The bid's own failures (BidTooLow, the offer gone, a failed re-read) say what happened; anything else
    // may have made an instance.
    if (input.bid && err instanceof ApplicationFailure) throw err;
    return await afterFailedCreate(deps, err, input, offer);
  }
}

/** A bid search shows the offer with the min_bid that matters for an interruptible rental (vast-api.md §1.3). */
async function rereadOffer(vast: VastClient, input: RentOfferInput): Promise<Offer | undefined> {
  const offers = await call(
    () =>
      vast.searchOffers({
        id: { eq: input.offerId },
        rentable: { eq: true },
        allocated_storage: input.diskGb,
        ...(input.bid ? { type: 'bid' } : {}),
      }),
    { offerId: input.offerId },
  );
  return offers.find((o) => o.id === input.offerId);
}

async function rentOnDemand(vast: VastClient, c: Creation): Promise<RentedInstance> {
  const instanceId = await c.create();
  const facts = offerFacts(c.offer, c.input.diskGb);
  return {
    instanceId,
    offer: { ...facts, dphTotal: (await readBilledDph(vast, instanceId)) ?? facts.dphTotal },
    ...tokenExpiry(c.env.TEMPORAL_API_KEY),
  };
}

async function rentInterruptible(vast: VastClient, c: Creation, bid: BidPolicy): Promise<RentedInstance> {
  const r = await rentWithBid(c.input.offerId, c.offer, bid, {
    vast,
    create: c.create,
    destroyAndConfirm: (instanceId) => destroyAndConfirm(vast, instanceId),
    reread: c.reread,
  });
  const facts = offerFacts(r.offer, c.input.diskGb);
  // Vast bills an interruptible instance its bid; read back what it bills, storage included.
  const storage = typeof r.offer.dph_base === 'number' ? facts.dphTotal - r.offer.dph_base : 0;
  const billed = (await readBilledDph(vast, r.instanceId)) ?? r.bid.priceDph + storage;
  return {
    instanceId: r.instanceId,
    offer: { ...facts, dphTotal: billed },
    bid: r.bid,
    ...tokenExpiry(c.env.TEMPORAL_API_KEY),
  };
}

/**
 * The create answer can come before the read path sees the contract (SkyPilot retries only the read,
 * 3 tries 1 s apart): a price we cannot read yet falls back to the offer's price for our disk.
 */
async function readBilledDph(vast: VastClient, instanceId: number): Promise<number | null> {
  for (let attempt = 1; attempt <= 3; attempt++) {
    const dph = billedDph(await vast.showInstance(instanceId).catch(() => null));
    if (dph !== null) return dph;
    if (attempt < 3) await sleep(1_000);
  }
  return null;
}
