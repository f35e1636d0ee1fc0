import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../workflows/domain/failures.js';
import type { BidPolicy, OfferFacts, RentedInstance } from '../../workflows/domain/types.js';
import { errText } from './call.js';
import { type VastClient, VastHttpError } from './client.js';
import type { VastActivityDeps } from './deps.js';
import { destroyAndConfirm } from './destroy.js';
import { backoffMs, toVastFailure } from './errors.js';
import { carriedTokenExpiry } from './host-token-expiry.js';
import { offerFacts } from './offer-facts.js';
import { billedDph } from './pricing.js';
import type { Instance, Offer } from './schemas.js';

/** The instance carrying our label, if Vast lists one: the rental an earlier create made. */
export async function findByLabel(vast: VastClient, label: string): Promise<Instance | undefined> {
  const found = await vast.listInstances({ label: { eq: label } });
  return found.find((i) => i.label === label);
}

/** An instance found by our label, taken as this rental: the price Vast bills it, its bid, its token's expiry. */
export function adopt(
  deps: VastActivityDeps,
  mine: Instance,
  facts: OfferFacts,
  bid: BidPolicy | undefined,
): RentedInstance {
  return {
    instanceId: mine.id,
    offer: { ...facts, dphTotal: billedDph(mine) ?? facts.dphTotal },
    ...adoptedBid(bid, mine),
    ...carriedTokenExpiry(mine, deps.hostToken !== undefined),
  };
}

/**
 * A create that failed may still have made an instance: an error body naming new_contract is destroyed
 * at once; for any other failure but a refused key we look the label up before deciding, so a lost,
 * garbled or late answer is adopted instead of renting twice or leaving an instance nobody knows of.
 */
export async function afterFailedCreate(
  deps: VastActivityDeps,
  err: unknown,
  input: { offerId: number; label: string; diskGb: number; bid?: BidPolicy },
  offer: Offer,
): Promise<RentedInstance> {
  const attempt = Context.current().info.attempt;
  if (err instanceof VastHttpError && err.newContract !== undefined) {
    // Vast made it but reports failure (e.g. a spot instance created stopped): nothing may bill unowned.
    await destroyAndConfirm(deps.vast, err.newContract).catch(() => undefined);
    throw toVastFailure(err, attempt, { offerId: input.offerId });
  }
  if (err instanceof VastHttpError && err.isAuth) throw toVastFailure(err, attempt, { offerId: input.offerId });
  let mine: Instance | undefined;
  try {
    mine = await findByLabel(deps.vast, input.label);
  } catch (lookupErr) {
    // Neither the create nor the lookup answered: retry; the next attempt looks the label up first.
    throw ApplicationFailure.create({
      type: FailureType.VastApiError,
      message: `create of offer ${input.offerId} had an uncertain outcome (${errText(err)}) and the label lookup failed (${errText(lookupErr)})`,
      nextRetryDelay: backoffMs(attempt),
      details: [{ offerId: input.offerId }],
    });
  }
  if (mine) {
    log.warn(
      `create of offer ${input.offerId} answered ${errText(err)}, but instance ${mine.id} carries our label: adopted`,
    );
    return adopt(deps, mine, offerFacts(offer, input.diskGb), input.bid);
  }
  throw toVastFailure(err, attempt, { offerId: input.offerId });
}

/** An interruptible rental adopted by its label (a lost create answer): its bid is what Vast bills for compute. */
function adoptedBid(policy: BidPolicy | undefined, inst: Instance): { bid?: RentedInstance['bid'] } {
  if (!policy) return {};
  const price = typeof inst.dph_base === 'number' ? inst.dph_base : (billedDph(inst) ?? policy.maxBidDph);
  const minBid = typeof inst.min_bid === 'number' ? inst.min_bid : null;
  const at = new Date().toISOString();
  return {
    bid: {
      priceDph: price,
      atRentDph: price,
      policy,
      history: {
        bids: [{ at, priceDph: price, minBidDph: minBid, why: 'rent' }],
        prices: [{ at, minBidDph: minBid, status: inst.actual_status ?? null }],
      },
    },
  };
}
