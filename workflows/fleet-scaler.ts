import {
  ApplicationFailure,
  ChildWorkflowFailure,
  ParentClosePolicy,
  patched,
  proxyActivities,
  proxyLocalActivities,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { StoreActivities } from '../activities/store/activities.js';
import type { TemporalActivities } from '../activities/temporal/activities.js';
import type { OfferSearchResult, VastActivities } from '../activities/vast/activities.js';
import { storeOptions, temporalVisibilityOptions, vastApiOptions } from './activity-options.js';
import { FailureType } from './failures.js';
import { instanceLifecycle } from './instance-lifecycle.js';
import { fleetFigures } from './policy/fleet-figures.js';
import { chooseOffers, type FleetTarget, rankOffers, type RankedOffer } from './policy/offer-ranking.js';
import { DEFAULT_DISK_GB } from './policy/defaults.js';
import { refusedByBudget } from './policy/budget-refusal.js';
import { fleetMetrics } from './metrics.js';
import { notify } from './notify.js';
import { lifecycleWorkflowId } from './task-queues.js';
import type { LifecycleRequest, OfferFacts } from './types.js';

const vast = proxyActivities<VastActivities>(vastApiOptions);
const temporal = proxyActivities<TemporalActivities>(temporalVisibilityOptions);
const store = proxyLocalActivities<StoreActivities>(storeOptions);
/** patched() id of counting the fleet per rental (README, "One identity per rental"). */
export const RENTAL_FIGURES_PATCH = 'fleet-figures-per-rental';

export interface OfferFilter {
  gpuModels: string[];
  minRamMb: number;
  minReliability: number;
  minCuda: number;
  maxOfferDph: number;
  /**
   * Vast's own default filters (vast-cli seeds verified=true, external=false, rentable=true). Omitted
   * means that default; null drops the filter (vast-cli's `any`).
   */
  verified?: boolean | null;
  external?: boolean | null;
  rentable?: boolean | null;
}

/** vast-cli's default search filters; the backend ignores `rented`, so it is not sent. */
export const DEFAULT_SEARCH_FLAGS = { verified: true, external: false, rentable: true } as const;

/** The search's offers, from this activity result or from one recorded before it reported dropped rows. */
export function offersOf(res: OfferSearchResult | OfferFacts[]): OfferFacts[] {
  return Array.isArray(res) ? res : res.offers;
}

export interface FleetScalerInput extends FleetTarget {
  filter: OfferFilter;
  /** How long to watch new lifecycles for a taken offer before moving on (seconds). */
  offerCheckSec: number;
  /** Overrides passed to every lifecycle started (durations, proofs); offerId and minRate are set here. */
  lifecycle?: Omit<LifecycleRequest, 'offerId' | 'minRate'>;
}

export interface FleetScalerResult {
  started: Array<{ offerId: number; workflowId: string; source: RankedOffer['source']; predictedRate: number | null }>;
  skipped: Array<{ offerId: number; why: string }>;
  fleetRate: number;
  fleetDph: number;
  /** Offer rows Vast sent that lacked what we need (count, first reason); absent in old runs' results. */
  droppedOffers?: { count: number; firstReason: string | null };
}

/**
 * Vast's offer query for the filter (RAM in MB). `allocated_storage` is the disk each lifecycle rents
 * (GiB): Vast prices `dph_total` for it, so the price filter, the ranking and the budget all see the
 * price Vast will bill, storage included, not its 8 GiB default.
 */
export function offerQuery(f: OfferFilter, diskGb: number): Record<string, unknown> {
  return {
    gpu_name: { in: f.gpuModels },
    cpu_ram: { gte: f.minRamMb },
    reliability2: { gte: f.minReliability },
    cuda_max_good: { gte: f.minCuda },
    dph_total: { lte: f.maxOfferDph },
    ...searchFlags(f),
    order: [['dph_total', 'asc']],
    type: 'on-demand',
    limit: 64,
    allocated_storage: diskGb,
  };
}

function searchFlags(f: OfferFilter): Record<string, { eq: boolean }> {
  const out: Record<string, { eq: boolean }> = {};
  for (const key of ['verified', 'external', 'rentable'] as const) {
    const v = f[key] === undefined ? DEFAULT_SEARCH_FLAGS[key] : f[key];
    if (v !== null) out[key] = { eq: v };
  }
  return out;
}

/**
 * One run of the scaler, started by a Temporal Schedule: reads the fleet, ranks offers by what past
 * benchmarks predict per dollar, and starts lifecycles toward the target within budget and caps. Each
 * run is a short workflow of its own (the schedule is the loop), so history stays small.
 */
export async function fleetScaler(input: FleetScalerInput): Promise<FleetScalerResult> {
  const perRental = patched(RENTAL_FIGURES_PATCH);
  const [rented, running, perf, bad, search] = await Promise.all([
    store.rentedInstances(),
    perRental
      ? temporal.runningRentals()
      : // Runs from before rental keys knew running lifecycles by workflow id alone (the key then).
        temporal.runningLifecycleIds().then((ids) => ids.map((id) => ({ workflowId: id, rentalKeys: [id] }))),
    store.perfHistory(),
    store.listBadMachines(),
    vast.searchOffers(offerQuery(input.filter, input.lifecycle?.diskGb ?? DEFAULT_DISK_GB)),
  ]);
  const offers = offersOf(search);
  const { promoted, inFlight } = fleetFigures(rented, running);
  const busyOffers = new Set(rented.map((r) => r.offerId));
  let ranked = rankOffers(
    offers.filter((o) => !busyOffers.has(o.offerId)),
    perf,
    bad,
    input.minRate,
  );
  const result: FleetScalerResult = {
    started: [],
    skipped: [],
    fleetRate: promoted.reduce((s, p) => s + p.rate, 0),
    fleetDph: [...promoted, ...inFlight].reduce((s, p) => s + p.dph, 0),
    ...(Array.isArray(search) ? {} : { droppedOffers: search.dropped }),
  };

  // Offers this run has started and that still count against the caps.
  let live: RankedOffer[] = [];
  let refusal: Promise<void> = Promise.resolve();
  // A taken offer fails its lifecycle within seconds: replace it with the next offer, a few rounds at most.
  for (let round = 0; round < 3; round++) {
    const fleetNow = {
      promoted,
      inFlight: [...inFlight, ...live.map((o) => ({ dph: o.dphTotal, predictedRate: o.predictedRate }))],
    };
    const chosen = chooseOffers(ranked, fleetNow, input);
    if (round === 0 && refusedByBudget([...ranked.known, ...ranked.explore], chosen, fleetNow, input)) {
      fleetMetrics.budgetRefused();
      refusal = notify({
        kind: 'budget_refusal',
        workflowId: workflowInfo().workflowId,
        reason: `fleet at ${result.fleetRate} proofs/h of ${input.targetRate}; the next offer would exceed $${input.maxDph}/h`,
        at: new Date().toISOString(),
      });
    }
    if (chosen.length === 0) break;
    const children = [];
    for (const o of chosen) {
      try {
        const child = await startChild(instanceLifecycle, {
          // Names the offer: one open lifecycle per offer; a closed one's id starts a new rental.
          workflowId: lifecycleWorkflowId(o.offerId),
          workflowIdReusePolicy: 'ALLOW_DUPLICATE',
          args: [{ ...input.lifecycle, offerId: o.offerId, minRate: input.minRate }],
          // The lifecycle outlives this scaler run.
          parentClosePolicy: ParentClosePolicy.ABANDON,
        });
        result.started.push({
          offerId: o.offerId,
          workflowId: child.workflowId,
          source: o.source,
          predictedRate: o.predictedRate,
        });
        live.push(o);
        children.push({ offer: o, result: child.result() });
      } catch (err) {
        // The id is the offer: a running lifecycle on this offer makes renting it twice impossible.
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        result.skipped.push({ offerId: o.offerId, why: 'a lifecycle for this offer is already running' });
      }
      ranked = without(ranked, o.offerId);
    }
    const taken = await offersTakenWithin(children, input.offerCheckSec);
    if (taken.length === 0) break;
    for (const offerId of taken) {
      result.started = result.started.filter((s) => s.offerId !== offerId);
      live = live.filter((o) => o.offerId !== offerId);
      result.skipped.push({ offerId, why: FailureType.OfferUnavailable });
    }
  }
  await refusal;
  return result;
}

async function offersTakenWithin(
  children: Array<{ offer: RankedOffer; result: Promise<unknown> }>,
  seconds: number,
): Promise<number[]> {
  const taken: number[] = [];
  const watched = children.map(({ offer, result }) =>
    result.then(
      () => undefined,
      (err: unknown) => {
        const cause = err instanceof ChildWorkflowFailure ? err.cause : err;
        if (cause instanceof ApplicationFailure && cause.type === FailureType.OfferUnavailable)
          taken.push(offer.offerId);
      },
    ),
  );
  await Promise.race([Promise.all(watched), sleep(seconds * 1000)]);
  return taken;
}

function without(r: { known: RankedOffer[]; explore: RankedOffer[] }, offerId: number) {
  return {
    known: r.known.filter((o) => o.offerId !== offerId),
    explore: r.explore.filter((o) => o.offerId !== offerId),
  };
}
