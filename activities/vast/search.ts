import { log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../workflows/domain/failures.js';
import type { OfferFacts } from '../../workflows/domain/types.js';
import { call } from './call.js';
import type { VastActivityDeps } from './deps.js';
import { offerFacts } from './offer-facts.js';

export interface OfferSearchResult {
  offers: OfferFacts[];
  /** Rows Vast sent that lack what we need (count and the first reason), left out of the ranking. */
  dropped: { count: number; firstReason: string | null };
}

export interface FleetInstance {
  instanceId: number;
  label: string;
  status: string | null;
  machineId: number | null;
}

/** Vast's offer query takes the disk to price storage for as `allocated_storage` (GiB). */
function allocatedStorage(query: Record<string, unknown>): number | null {
  const v = query.allocated_storage;
  return typeof v === 'number' && v > 0 ? v : null;
}

/** Offer search in Vast's query format; rows that lack what we need are dropped, counted and logged. */
export async function searchOffers(deps: VastActivityDeps, query: Record<string, unknown>): Promise<OfferSearchResult> {
  const diskGb = allocatedStorage(query);
  if (diskGb === null) {
    // Without it Vast prices 8 GiB of disk, and every ranking and budget would use a price we never pay.
    throw ApplicationFailure.create({
      type: FailureType.VastApiError,
      message: 'offer search without allocated_storage: send the disk the lifecycle will rent (GiB)',
      nonRetryable: true,
    });
  }
  const { offers, dropped } = await call(() => deps.vast.searchOffersReport(query));
  if (dropped.count > 0) {
    log.warn(`Vast offer search: dropped ${dropped.count} unusable row(s); first: ${dropped.firstReason}`, {
      dropped: dropped.count,
      kept: offers.length,
    });
  }
  return { offers: offers.map((o) => offerFacts(o, diskGb)), dropped };
}

/** Every instance this fleet owns, found by its label prefix (the v1 list pages through all). */
export async function listFleetInstances(deps: VastActivityDeps, labelPrefix: string): Promise<FleetInstance[]> {
  const all = await call(() => deps.vast.listInstances({}));
  return all
    .filter((i) => i.label?.startsWith(labelPrefix))
    .map((i) => ({
      instanceId: i.id,
      label: i.label ?? '',
      status: i.actual_status ?? null,
      machineId: i.machine_id ?? null,
    }));
}
