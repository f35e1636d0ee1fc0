import { proxyActivities } from '@temporalio/workflow';
import type { InstanceReading } from '../../activities/vast/instance-state.js';
import type { VastActivities } from '../../activities/vast/activities.js';
import { vastApiOptions } from '../activity-options.js';
import { type Classified, killFailure } from '../classify.js';
import { FailureType } from '../domain/failures.js';
import { bidCapDph, pushBounded, raiseTo, stoppedByMarket } from '../domain/policy/bid.js';
import type { RentedInstance, Stage } from '../domain/types.js';
import { vastSummary } from '../ui/summaries.js';
import { summarized } from '../ui/summarized.js';

const vast = summarized(proxyActivities<VastActivities>(vastApiOptions), vastSummary);

/** Endings that say nothing about the host, so Vast is not asked whether the market took it. */
const NOT_A_HOST_SYMPTOM = new Set<string>([
  FailureType.CancelledByOperator,
  FailureType.DestroyFailed,
  FailureType.Preempted,
  FailureType.BidTooLow,
  FailureType.OfferUnavailable,
  FailureType.VastApiError,
]);

/** Stages before the instance first ran: stopped there, the bid was too low from the start. */
const BEFORE_RUNNING = new Set<Stage>(['provisioning', 'waiting_running']);

function marketOf(r: InstanceReading) {
  return {
    actualStatus: r.status,
    intendedStatus: r.market?.intendedStatus ?? null,
    curState: r.market?.curState ?? null,
    nextState: r.market?.nextState ?? null,
    minBidDph: r.market?.minBidDph ?? null,
    statusMsg: r.market?.statusMsg ?? null,
  };
}

/** Records one min_bid reading in the rental's evidence. */
function note(rented: RentedInstance, r: InstanceReading): void {
  if (!rented.bid) return;
  const prices = pushBounded(rented.bid.history.prices, {
    at: new Date().toISOString(),
    minBidDph: r.market?.minBidDph ?? null,
    status: r.status,
  });
  rented.bid = { ...rented.bid, history: { ...rented.bid.history, prices } };
}

function preempted(rented: RentedInstance, stage: Stage, why: string, r: InstanceReading, symptom?: Classified) {
  const type = BEFORE_RUNNING.has(stage) ? FailureType.BidTooLow : FailureType.Preempted;
  return {
    type,
    message: `outbid: ${why}`,
    details: {
      instanceId: rented.instanceId,
      bidDph: rented.bid?.priceDph ?? null,
      minBidDph: r.market?.minBidDph ?? null,
      actualStatus: r.status,
      intendedStatus: r.market?.intendedStatus ?? null,
      curState: r.market?.curState ?? null,
      nextState: r.market?.nextState ?? null,
      bidHistory: rented.bid?.history ?? null,
      // What the lifecycle saw first (a lost host, a dropped stream): a symptom of the stop, not the host's fault.
      ...(symptom ? { hostSymptom: { type: symptom.type, message: symptom.message } } : {}),
    },
  };
}

/**
 * The kill path's question for an interruptible rental: did the market take the machine? A lost host or
 * a failed step of an instance Vast has stopped for a higher bid is `Preempted` (`BidTooLow` before it
 * ever ran), which never counts against the machine. On-demand rentals and Vast read failures keep
 * the failure as classified.
 */
export async function marketOrHost(
  failure: Classified,
  rented: RentedInstance | null,
  stage: Stage,
): Promise<Classified> {
  if (!rented?.bid || NOT_A_HOST_SYMPTOM.has(failure.type)) return failure;
  let r: InstanceReading;
  try {
    r = await vast.instanceState(rented.instanceId);
  } catch {
    return failure;
  }
  if (r.unreadable !== undefined) return failure;
  note(rented, r);
  const why = stoppedByMarket(marketOf(r), rented.bid.priceDph);
  if (!why) return failure;
  return { ...preempted(rented, stage, why, r, failure), diagnostics: failure.diagnostics };
}

/**
 * One watch sample of a promoted interruptible rental: `Preempted` when Vast has stopped it; otherwise
 * the bid is raised (change bid) when min_bid has come within half the margin of it and the cap allows,
 * so the next step of the market does not stop a proving host.
 */
export async function watchBid(rented: RentedInstance, r: InstanceReading, stage: Stage): Promise<void> {
  const bid = rented.bid;
  if (!bid || r.unreadable !== undefined) return;
  note(rented, r);
  const why = stoppedByMarket(marketOf(r), bid.priceDph);
  if (why) {
    const p = preempted(rented, stage, why, r);
    throw killFailure(p.type, p.message, p.details);
  }
  const next = raiseTo(bid.priceDph, r.market?.minBidDph ?? null, bid.policy, rented.offer.numGpus);
  if (next === null) return;
  const changed = await vast.changeBid({ instanceId: rented.instanceId, priceDph: next });
  if (changed.gone) {
    // Vast's word that the instance no longer exists, as the watch reads a show answering 404.
    throw killFailure(FailureType.HostLost, 'instance is gone at Vast (change bid answered 404 no_such_instance)', {
      actualStatus: null,
    });
  }
  const current = rented.bid ?? bid;
  // What Vast bills from now on (cost counts interruptible time at the price paid).
  rented.offer = {
    ...rented.offer,
    dphTotal: Math.round((rented.offer.dphTotal + next - current.priceDph) * 1e6) / 1e6,
  };
  rented.bid = {
    ...current,
    priceDph: next,
    history: {
      ...current.history,
      bids: pushBounded(current.history.bids, {
        at: new Date().toISOString(),
        priceDph: next,
        minBidDph: r.market?.minBidDph ?? null,
        why: 'raise',
      }),
    },
  };
}

/** The price ceiling of a watched interruptible rental: the bid cap plus what it pays for storage. */
export function bidCeilingDph(rented: RentedInstance): number | null {
  const bid = rented.bid;
  if (!bid) return null;
  return Math.round((rented.offer.dphTotal - bid.priceDph + bidCapDph(bid.policy, rented.offer.numGpus)) * 1e6) / 1e6;
}
