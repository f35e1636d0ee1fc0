import type { SimOffer } from '../scenario.js';

/**
 * How Vast prices an offer (../shared/reference/vast-api.md §1.3, §1.7): `dph_total` is compute
 * (`dph_base`) plus storage for the search's `allocated_storage` GiB at `storage_cost` $/GB/month
 * over 720 h; a search that sends none is priced for 8 GiB (the OpenAPI's default). A rented instance
 * bills the same way for the disk it was created with.
 */
export const DEFAULT_ALLOCATED_STORAGE_GB = 8;

export function simStorageDph(gb: number, storageCost: number): number {
  return (gb * storageCost) / 720;
}

/** The compute price of a scenario offer; a scenario's `dph_total` is what an 8 GiB search shows. */
export function simDphBase(o: SimOffer): number {
  return o.dph_base ?? o.dph_total - simStorageDph(DEFAULT_ALLOCATED_STORAGE_GB, o.storage_cost);
}

/** The price fields of an offer row for a search with `allocatedGb` of storage. */
export function offerPriceFields(o: SimOffer, allocatedGb: number) {
  const base = simDphBase(o);
  const storage = simStorageDph(allocatedGb, o.storage_cost);
  return {
    dph_base: base,
    storage_cost: o.storage_cost,
    storage_total_cost: storage,
    dph_total: base + storage,
    search: { gpuCostPerHour: base, diskHour: storage, totalHour: base + storage },
  };
}

/** What Vast bills per hour for an instance created from `o` with `diskGb` of disk. */
export function simBilledDph(o: SimOffer, diskGb: number): number {
  return simDphBase(o) + simStorageDph(diskGb, o.storage_cost);
}
