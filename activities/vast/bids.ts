import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../workflows/domain/failures.js';
import { bidCapDph, bidFor, emptyBidHistory, pushBounded, stoppedByMarket } from '../../workflows/domain/policy/bid.js';
import type { BidHistory, BidPolicy, RentedBid } from '../../workflows/domain/types.js';
import { type VastClient, VastHttpError } from './client.js';
import type { Instance, Offer } from './schemas.js';

/**
 * Change bid (`PUT /api/v0/instances/bid_price/{id}/`). An instance that is gone (404 `no_such_instance`,
 * change_bid.yaml) is read as gone, as a show answering 404 is, not as a refusal: the lifecycle ends it
 * as Vast says, not as an API error.
 */
export async function changeBid(
  vast: VastClient,
  input: { instanceId: number; priceDph: number },
): Promise<{ priceDph: number; gone: boolean }> {
  try {
    await vast.changeBid(input.instanceId, input.priceDph);
    return { priceDph: input.priceDph, gone: false };
  } catch (err) {
    if (err instanceof VastHttpError && err.isInstanceGone) return { priceDph: input.priceDph, gone: true };
    throw err;
  }
}

/** The market's verdict on an instance Vast made or runs (see stoppedByMarket). */
export function outbidEvidence(inst: Instance | null, bidDph: number | null): string | null {
  if (!inst) return null;
  return stoppedByMarket(
    {
      actualStatus: inst.actual_status ?? null,
      intendedStatus: inst.intended_status ?? null,
      curState: inst.cur_state ?? null,
      nextState: inst.next_state ?? null,
      minBidDph: typeof inst.min_bid === 'number' ? inst.min_bid : null,
      statusMsg: inst.status_msg ?? null,
    },
    bidDph,
  );
}

export interface BidRentDeps {
  vast: VastClient;
  create: (priceDph: number) => Promise<number>;
  destroyAndConfirm: (instanceId: number) => Promise<unknown>;
  /** Re-reads the offer (its min_bid moves with the market); undefined when it is no longer listed. */
  reread: () => Promise<Offer | undefined>;
  now?: () => Date;
}

/**
 * Creates an interruptible instance at `min_bid × (1 + margin)`. When Vast answers a bid too low (an
 * error naming a new contract, which it made stopped), that contract is destroyed, the offer re-read,
 * and the create tried again at a higher bid, `policy.rebids` times at most and never above the cap;
 * then `BidTooLow`, with every bid and min_bid as evidence. Nothing here marks the machine.
 */
export async function rentWithBid(
  offerId: number,
  first: Offer,
  policy: BidPolicy,
  deps: BidRentDeps,
): Promise<{ instanceId: number; bid: RentedBid; offer: Offer }> {
  const now = () => (deps.now ?? (() => new Date()))().toISOString();
  let history: BidHistory = emptyBidHistory();
  let offer = first;
  let last = 0;
  for (let attempt = 0; attempt <= policy.rebids; attempt++) {
    const minBid = typeof offer.min_bid === 'number' ? offer.min_bid : null;
    if (minBid === null) {
      throw ApplicationFailure.create({
        type: FailureType.VastApiError,
        message: `offer ${offerId} shows no min_bid: an interruptible bid cannot be placed`,
        nonRetryable: true,
        details: [{ offerId }],
      });
    }
    history = { ...history, prices: pushBounded(history.prices, { at: now(), minBidDph: minBid, status: null }) };
    // After a refusal: a margin above the refused bid, or above min_bid if the market has moved past it.
    const price = bidFor(attempt === 0 ? minBid : Math.max(minBid, last), policy, offer.num_gpus);
    if (price === null) {
      throw bidTooLow(
        offerId,
        `a bid a ${policy.marginPct} % margin above $${Math.max(minBid, last)}/h would pass the cap of $${bidCapDph(policy, offer.num_gpus)}/h`,
        history,
      );
    }
    history = {
      ...history,
      bids: pushBounded(history.bids, {
        at: now(),
        priceDph: price,
        minBidDph: minBid,
        why: attempt === 0 ? 'rent' : 'rebid-at-create',
      }),
    };
    last = price;
    try {
      const instanceId = await deps.create(price);
      return { instanceId, bid: { priceDph: price, atRentDph: price, policy, history }, offer };
    } catch (err) {
      if (!(err instanceof VastHttpError) || err.newContract === undefined) throw err;
      const made = await deps.vast.showInstance(err.newContract).catch(() => null);
      const stopped = outbidEvidence(made, price);
      // Whatever Vast made, nothing may bill unowned.
      await deps.destroyAndConfirm(err.newContract).catch(() => undefined);
      if (!stopped) throw err;
      history = {
        ...history,
        prices: pushBounded(history.prices, {
          at: now(),
          minBidDph: typeof made?.min_bid === 'number' ? made.min_bid : minBid,
          status: `created stopped (${err.errorCode ?? 'error'}: ${err.vastMessage ?? ''})`.slice(0, 200),
        }),
      };
      const again = await deps.reread();
      if (!again) {
        throw ApplicationFailure.create({
          type: FailureType.OfferUnavailable,
          message: `offer ${offerId} is no longer listed after a bid of $${price}/h was too low`,
          nonRetryable: true,
          details: [{ offerId, bidHistory: history }],
        });
      }
      offer = again;
    }
  }
  throw bidTooLow(offerId, `${policy.rebids + 1} bid(s) up to $${last}/h were all under min_bid`, history);
}

function bidTooLow(offerId: number, why: string, history: BidHistory): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.BidTooLow,
    message: `offer ${offerId}: ${why}`,
    nonRetryable: true,
    details: [{ offerId, bidHistory: history }],
  });
}
