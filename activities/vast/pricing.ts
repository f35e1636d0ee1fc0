import type { Instance, Offer } from './schemas.js';

/**
 * Vast bills storage by the month: storage $/h = GB × `storage_cost` ($/GB/month) / 720
 * (../shared/reference/vast-api.md §1.7; the real capture in §1.13 checks out with it).
 */
export const STORAGE_HOURS_PER_MONTH = 720;

export function storageDph(diskGb: number, storageCostPerGbMonth: number): number {
  return (diskGb * storageCostPerGbMonth) / STORAGE_HOURS_PER_MONTH;
}

/**
 * What renting this offer with `diskGb` of disk will cost per hour. Vast prices `dph_total` for the
 * `allocated_storage` the search sent (we send our disk); where the row also carries `dph_base` and
 * `storage_cost`, the price is recomputed for our disk, so a search priced for another size (Vast's
 * default is 8 GiB, the CLI's 5) cannot make an offer look cheaper than it bills.
 */
export function expectedDph(offer: Pick<Offer, 'dph_total' | 'dph_base' | 'storage_cost'>, diskGb: number): number {
  if (typeof offer.dph_base === 'number' && typeof offer.storage_cost === 'number') {
    return round6(offer.dph_base + storageDph(diskGb, offer.storage_cost));
  }
  return offer.dph_total;
}

/** The price Vast bills for a rented instance: its own `dph_total` (vast-api.md §1.14 point 4), if it says. */
export function billedDph(inst: Pick<Instance, 'dph_total'> | null): number | null {
  const dph = inst?.dph_total;
  return typeof dph === 'number' && Number.isFinite(dph) && dph > 0 ? dph : null;
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
