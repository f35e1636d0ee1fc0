import {
  ApplicationFailure,
  ChildWorkflowFailure,
  getExternalWorkflowHandle,
  isCancellation,
  ParentClosePolicy,
  proxyActivities,
  proxyLocalActivities,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { StoreActivities } from '../activities/store/activities.js';
import type { FleetRow } from '../activities/store/queries.js';
import type { TemporalActivities } from '../activities/temporal/activities.js';
import type { VastActivities } from '../activities/vast/activities.js';
import { storeOptions, temporalVisibilityOptions, vastApiOptions } from './activity-options.js';
import { FailureType } from './domain/failures.js';
import { instanceLifecycle } from './instance-lifecycle.js';
import { decidedFigures, type DecidedFigures } from './domain/policy/fleet-figures.js';
import type { FleetNow, FleetTarget } from './domain/policy/offer-ranking.js';
import { DEFAULT_DISK_GB } from './domain/policy/defaults.js';
import { portfolioFleet, rankForRunByValue } from './domain/policy/scaler-ranking.js';
import { choosePortfolio, type ValuedOffer } from './domain/policy/value-ranking.js';
import { type OfferFilter, offerQuery } from './domain/policy/offer-filter.js';
import { refusedByBudget } from './domain/policy/budget-refusal.js';
import {
  type BidCandidate,
  bidCandidates,
  type CapacityMix,
  chooseMixed,
  INVALID_SCALER_INPUT,
  type MixedChoice,
  parseCapacityMix,
} from './domain/policy/capacity-mix.js';
import { type KeptHost, REBALANCE_FACTOR, retirements } from './domain/policy/keep-by-dollar.js';
import { retireSignal } from './lifecycle/keep-by-dollar.js';
import { fleetMetrics } from './metrics.js';
import { notify } from './notify.js';
import { lifecycleWorkflowId } from './domain/task-queues.js';
import { lifecycleStaticDetails, lifecycleStaticSummary } from './ui/summaries.js';
import type { LifecycleRequest } from './domain/types.js';

const vast = proxyActivities<VastActivities>(vastApiOptions);
const temporal = proxyActivities<TemporalActivities>(temporalVisibilityOptions);
const store = proxyLocalActivities<StoreActivities>(storeOptions);

/** vast-cli's default search filters; the backend ignores `rented`, so it is not sent. */

export interface FleetScalerInput extends FleetTarget {
  filter: OfferFilter;
  /** How long to watch new lifecycles for a taken offer before moving on (seconds). */
  offerCheckSec: number;
  /**
   * Inconclusive verdicts (not the host's fault) a machine may have within `inconclusiveWindowSec` and
   * still be rented again; past that it rests until they age out, so a retry cannot loop. Default 1 in 6 h.
   */
  inconclusiveRetries?: number;
  inconclusiveWindowSec?: number;
  /** Overrides passed to every lifecycle started (durations, proofs); offerId and minRate are set here. */
  lifecycle?: Omit<LifecycleRequest, 'offerId' | 'minRate' | 'bid'>;
  /** Mix on-demand and interruptible capacity (absent: on-demand only). */
  capacity?: CapacityMix;
}

export interface FleetScalerResult {
  started: Array<{
    offerId: number;
    workflowId: string;
    /** What the prediction rests on (predictions.ts): 'unknown' is a model tried in an exploration slot. */
    source: ValuedOffer['source'];
    predictedRate: number;
    /** The bid of an interruptible rental ($/h); absent for on-demand. */
    bidDph?: number;
  }>;
  skipped: Array<{ offerId: number; why: string }>;
  fleetRate: number;
  fleetDph: number;
  /** Offer rows Vast sent that lacked what we need (count, first reason). */
  droppedOffers: { count: number; firstReason: string | null };
  /** Machines not rented this run because of recent inconclusive verdicts. */
  restingMachines?: number[];
  /** The fleet as this run counted it before renting, in real units. */
  fleet: DecidedFigures;
  /** Promoted hosts this run retired for cheaper ones (rebalancing), with their $ per proof. */
  retired?: Array<{ rentalKey: string; workflowId: string; costPerProof: number }>;
}

export const DEFAULT_INCONCLUSIVE_RETRIES = 1;
export const DEFAULT_INCONCLUSIVE_WINDOW_SEC = 6 * 3600;

/**
 * One run of the scaler, started by a Temporal Schedule: reads the fleet, retires promoted hosts a cheaper
 * fleet can replace (rebalancing), ranks offers by the upper bound of the proofs/h per dollar they are
 * predicted to prove (per model, GPU count and RAM class), and starts lifecycles toward the target within
 * budget and caps. The policy evaluator (infra/bench/eval/policies.ts `oursTick`) makes the same calls in
 * the same order. Each run is a short workflow of its own (the schedule is the loop), so history stays small.
 */
export async function fleetScaler(input: FleetScalerInput): Promise<FleetScalerResult> {
  const mix = capacityOf(input);
  const diskGb = input.lifecycle?.diskGb ?? DEFAULT_DISK_GB;
  const [rented, running, samples, bad, search, bidSearch] = await Promise.all([
    store.rentedInstances(),
    temporal.runningRentals(),
    store.perfSamples(),
    store.listBadMachines(),
    vast.searchOffers(offerQuery(input.filter, diskGb)),
    // With type "bid" min_bid is the price that matters (vast-api.md §1.3).
    mix ? vast.searchOffers(offerQuery(input.filter, diskGb, 'bid')) : Promise.resolve(null),
  ]);
  const resting = await store.restingMachines({
    windowSec: input.inconclusiveWindowSec ?? DEFAULT_INCONCLUSIVE_WINDOW_SEC,
    retries: input.inconclusiveRetries ?? DEFAULT_INCONCLUSIVE_RETRIES,
  });
  const fleet = portfolioFleet(rented, running, samples);
  const retired = await rebalance(fleet.promoted, rented, input.targetRate);
  const promoted = fleet.promoted.filter((p) => !retired.some((x) => x.rentalKey === p.key));
  const notRentable = [...bad, ...resting];
  const bids = mix && bidSearch ? bidCandidates(bidSearch.offers, mix, diskGb) : [];
  const lists: Ranked = {
    onDemand: rankForRunByValue(search.offers, rented, samples, notRentable, input.minRate),
    spot: rankForRunByValue(bids, rented, samples, notRentable, input.minRate),
  };
  const result: FleetScalerResult = {
    started: [],
    skipped: [],
    fleetRate: promoted.reduce((s, p) => s + p.rate, 0),
    fleetDph: [...promoted, ...fleet.inFlight].reduce((s, p) => s + p.dph, 0),
    droppedOffers: search.dropped,
    ...(resting.length > 0 ? { restingMachines: resting } : {}),
    ...(retired.length > 0 ? { retired } : {}),
    fleet: decidedFigures({ promoted, inFlight: fleet.inFlight }, input),
  };
  await startRounds(lists, { promoted, inFlight: fleet.inFlight }, input, mix, result, bids);
  return result;
}

interface Ranked {
  onDemand: ValuedOffer[];
  spot: ValuedOffer[];
}

/**
 * Starts the chosen offers. A taken offer fails its lifecycle within seconds: it is replaced with the next
 * offer, a few rounds at most. A budget that keeps the fleet short is told once, on the first round.
 */
async function startRounds(
  lists: Ranked,
  fleet: FleetNow,
  input: FleetScalerInput,
  mix: CapacityMix | null,
  result: FleetScalerResult,
  bids: readonly BidCandidate[],
): Promise<void> {
  // Offers this run has started and that still count against the caps.
  let live: MixedChoice[] = [];
  let refusal: Promise<void> = Promise.resolve();
  for (let round = 0; round < 3; round++) {
    const fleetNow = { promoted: fleet.promoted, inFlight: [...fleet.inFlight, ...live.map(asInFlight)] };
    const chosen: MixedChoice[] = mix
      ? chooseMixed(lists.onDemand, lists.spot, fleetNow, input, mix, REBALANCE_FACTOR)
      : choosePortfolio(lists.onDemand, fleetNow, input, REBALANCE_FACTOR).map((o) => ({ ...o, interruptible: false }));
    if (round === 0 && refusedByBudget([...lists.onDemand, ...lists.spot], chosen, fleetNow, input))
      refusal = budgetRefusal(result, input);
    if (chosen.length === 0) break;
    const children = await startLifecycles(chosen, input, result, bids);
    for (const { offer } of children) live.push(offer);
    const drop = new Set(chosen.map((o) => o.offerId));
    lists = {
      onDemand: lists.onDemand.filter((o) => !drop.has(o.offerId)),
      spot: lists.spot.filter((o) => !drop.has(o.offerId)),
    };
    const taken = await offersTakenWithin(children, input.offerCheckSec);
    if (taken.length === 0) break;
    for (const { offerId, why } of taken) {
      result.started = result.started.filter((s) => s.offerId !== offerId);
      live = live.filter((o) => o.offerId !== offerId);
      result.skipped.push({ offerId, why });
    }
  }
  await refusal;
}

/**
 * Rebalancing: the promoted hosts to retire for cheaper ones (`retirements`: while the fleet reaches its
 * target without them, dearest per proof first), each told by a Signal; the watch ends it `PricedOut`.
 * A lifecycle already gone is passed over: the next run sees the fleet as it is then.
 */
async function rebalance(promoted: readonly KeptHost[], rented: readonly FleetRow[], targetRate: number) {
  const out: NonNullable<FleetScalerResult['retired']> = [];
  for (const h of retirements(promoted, targetRate, REBALANCE_FACTOR)) {
    const row = rented.find((r) => r.rentalKey === h.key)!;
    const order = {
      costPerProof: h.costPerProof,
      bestCostPerProof: h.bestCostPerProof,
      factor: REBALANCE_FACTOR,
      by: `fleet scaler run ${workflowInfo().workflowId}`,
    };
    try {
      await getExternalWorkflowHandle(row.workflowId).signal(retireSignal, order);
      out.push({ rentalKey: h.key, workflowId: row.workflowId, costPerProof: h.costPerProof });
    } catch (err) {
      // Not found or closed: it ended on its own since the store was read.
      if (isCancellation(err)) throw err;
    }
  }
  return out;
}

/** The budget kept the next offer out: counted, and told to the operator's webhook. */
function budgetRefusal(result: FleetScalerResult, input: FleetScalerInput): Promise<void> {
  fleetMetrics.budgetRefused();
  return notify({
    kind: 'budget_refusal',
    workflowId: workflowInfo().workflowId,
    reason: `fleet at ${result.fleetRate} proofs/h of ${input.targetRate}; the next offer would exceed $${input.maxDph}/h`,
    at: new Date().toISOString(),
  });
}

const asInFlight = (o: MixedChoice) => ({
  dph: o.dphTotal,
  predictedRate: o.predictedRate,
  ...(o.interruptible ? { interruptible: true } : {}),
});

/** The schedule's capacity mix, checked: a bad one fails the run at once, naming the field. */
function capacityOf(input: FleetScalerInput): CapacityMix | null {
  if (input.capacity === undefined) return null;
  const parsed = parseCapacityMix(input.capacity);
  if (!parsed.ok)
    throw ApplicationFailure.create({ type: INVALID_SCALER_INPUT, message: parsed.error, nonRetryable: true });
  return parsed.mix;
}

/**
 * Starts a lifecycle per chosen offer (an interruptible one with its bid policy), skipping offers a
 * running lifecycle holds; each started one is in `result`.
 */
async function startLifecycles(
  chosen: MixedChoice[],
  input: FleetScalerInput,
  result: FleetScalerResult,
  bids: readonly BidCandidate[],
) {
  const children: Array<{ offer: MixedChoice; result: Promise<unknown> }> = [];
  for (const o of chosen) {
    const bid = o.interruptible ? bids.find((b) => b.offerId === o.offerId)?.bid : undefined;
    try {
      const child = await startChild(instanceLifecycle, {
        // Names the offer: one open lifecycle per offer; a closed one's id starts a new rental.
        workflowId: lifecycleWorkflowId(o.offerId),
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        args: [
          {
            ...input.lifecycle,
            offerId: o.offerId,
            minRate: input.minRate,
            // Kept by the dollar against what this target costs per proof (policy/keep-by-dollar.ts).
            fleetTargetRate: input.targetRate,
            ...(bid ? { bid: { marginPct: bid.marginPct, maxBidDph: bid.maxBidDph, rebids: bid.rebids } } : {}),
          },
        ],
        // The lifecycle outlives this scaler run.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        // What the scaler knew when it chose this offer, shown on the lifecycle's page and in the list.
        staticSummary: lifecycleStaticSummary({ offer: o, minRate: input.minRate, startedBy: 'fleet scaler' }),
        staticDetails: lifecycleStaticDetails({
          offer: o,
          minRate: input.minRate,
          predictedRate: o.predictedRate,
          upperRate: o.upperRate,
          source: o.source,
          startedBy: `fleet scaler run ${workflowInfo().workflowId}`,
        }),
      });
      result.started.push({
        offerId: o.offerId,
        workflowId: child.workflowId,
        source: o.source,
        predictedRate: o.predictedRate,
        ...(bid ? { bidDph: bid.priceDph } : {}),
      });
      children.push({ offer: o, result: child.result() });
    } catch (err) {
      // The id is the offer: a running lifecycle on this offer makes renting it twice impossible.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      result.skipped.push({ offerId: o.offerId, why: 'a lifecycle for this offer is already running' });
    }
  }
  return children;
}

async function offersTakenWithin(
  children: Array<{ offer: MixedChoice; result: Promise<unknown> }>,
  seconds: number,
): Promise<Array<{ offerId: number; why: string }>> {
  const taken: Array<{ offerId: number; why: string }> = [];
  // An offer someone took, or whose min_bid ran past our cap before we could rent it: the next offer instead.
  const replaceable = new Set<string>([FailureType.OfferUnavailable, FailureType.BidTooLow]);
  const watched = children.map(({ offer, result }) =>
    result.then(
      () => undefined,
      (err: unknown) => {
        const cause = err instanceof ChildWorkflowFailure ? err.cause : err;
        if (cause instanceof ApplicationFailure && cause.type && replaceable.has(cause.type))
          taken.push({ offerId: offer.offerId, why: cause.type });
      },
    ),
  );
  await Promise.race([Promise.all(watched), sleep(seconds * 1000)]);
  return taken;
}
