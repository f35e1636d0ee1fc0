import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { NotifyActivities } from '../activities/notify/activities.js';
import type { StoreActivities } from '../activities/store/activities.js';
import type { MachineRecord } from '../activities/store/queries.js';
import type { VastActivities } from '../activities/vast/activities.js';
import { storeOptions, vastApiOptions } from './activity-options.js';
import { DEFAULT_DISK_GB } from './domain/policy/defaults.js';
import { type LeftOutOffer, offerPreview } from './domain/policy/scaler-ranking.js';
import type { ValuedOffer } from './domain/policy/value-ranking.js';
import { type OfferFilter, offerQuery } from './domain/policy/offer-filter.js';
import type { OfferFacts } from './domain/types.js';
import { DEFAULT_INCONCLUSIVE_RETRIES, DEFAULT_INCONCLUSIVE_WINDOW_SEC } from './fleet-scaler.js';

const vast = proxyActivities<VastActivities>(vastApiOptions);
const store = proxyLocalActivities<StoreActivities>(storeOptions);
const settings = proxyLocalActivities<NotifyActivities>({ startToCloseTimeout: '5 seconds' });

/**
 * Whether the control worker has a webhook to tell (its NOTIFY_WEBHOOK_URL, which only it reads): what
 * `deploy` and `schedule setup` pass the lifecycles they start as `notify`.
 */
export async function webhookCheck(): Promise<{ webhook: boolean }> {
  return { webhook: await settings.webhookConfigured() };
}

export interface MachineAction {
  machineId: number;
  action: 'bad' | 'ignore' | 'unignore';
  operator: string;
  reason: string;
}

/**
 * An operator's verdict on a machine, as a workflow so it is recorded in history (who, when, why) and
 * the Vast key and database stay with the worker.
 */
export async function machineAdmin(a: MachineAction): Promise<{ changed: boolean }> {
  const changed = await store.markMachine({
    machineId: a.machineId,
    action: a.action,
    reason: `${a.operator}: ${a.reason}`,
  });
  return { changed };
}

/** What `gpu-fleet offers` shows: the scaler's ranking of the offers now, and what it left out and why. */
export interface OfferReport {
  /** Best first, as the scaler would rent them: each with its predicted proofs/h, upper bound, score and source. */
  ranked: Array<ValuedOffer & OfferFacts>;
  /** Offers the ranking left out, each with its reason. */
  leftOut: LeftOutOffer[];
  badMachines: number[];
  /** The marks of the bad machines above (reason, by the rule or an operator, when). */
  excluded: MachineRecord[];
  /** Machines resting after recent inconclusive verdicts (at the scaler's default window and retries). */
  restingMachines: number[];
  /** Offer rows Vast sent that lacked what we need (count, first reason). */
  dropped: { count: number; firstReason: string | null };
}

/**
 * Current offers ranked as the scaler ranks them (the CLI's `offers`, whose Vast search needs the worker's
 * key): the same store reads and the same ranking (scaler-ranking.ts), so the preview's order is the order
 * the scaler rents in. Bad machines' marks come back so the CLI names them with why.
 */
export async function offerReport(input: {
  filter: OfferFilter;
  minRate: number;
  diskGb?: number;
}): Promise<OfferReport> {
  const [search, rented, samples, bad, resting, marks] = await Promise.all([
    vast.searchOffers(offerQuery(input.filter, input.diskGb ?? DEFAULT_DISK_GB)),
    store.rentedInstances(),
    store.perfSamples(),
    store.listBadMachines(),
    store.restingMachines({ windowSec: DEFAULT_INCONCLUSIVE_WINDOW_SEC, retries: DEFAULT_INCONCLUSIVE_RETRIES }),
    store.machineRecords({}),
  ]);
  const { ranked, leftOut } = offerPreview(search.offers, rented, samples, { bad, resting }, input.minRate);
  return {
    ranked,
    leftOut,
    badMachines: bad,
    excluded: marks.filter((m) => bad.includes(m.machineId)),
    restingMachines: resting,
    dropped: search.dropped,
  };
}

/** What `deploy` checks first: is the offer there, and is its machine marked bad. */
export async function offerCheck(input: {
  offerId: number;
}): Promise<{ offer: OfferFacts | null; badMachine: MachineRecord | null }> {
  // Priced for the disk a lifecycle rents, as the scaler and `offers` search: the price Vast will bill.
  const search = await vast.searchOffers({
    id: { eq: input.offerId },
    type: 'on-demand',
    limit: 1,
    allocated_storage: DEFAULT_DISK_GB,
  });
  const offer = search.offers.find((o) => o.offerId === input.offerId) ?? null;
  if (!offer) return { offer: null, badMachine: null };
  const [record] = await store.machineRecords({ machineId: offer.machineId });
  return { offer, badMachine: record ?? null };
}
