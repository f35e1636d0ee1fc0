import type { OfferFacts } from '../../workflows/domain/types.js';
import { billedDph, expectedDph } from './pricing.js';
import type { Instance, Offer } from './schemas.js';

/** cpu_ram is the host's total; a fractional offer (or its instance) gets its share of cores, and RAM with them. */
export function ramShareMb(cpuRamMb: number, cores?: number | null, effective?: number | null): number {
  const share = cores && effective ? Math.min(1, effective / cores) : 1;
  return Math.round(cpuRamMb * share);
}

/** The offer as the workflow plans with it, priced for the `diskGb` we rent. */
export function offerFacts(offer: Offer, diskGb: number): OfferFacts {
  return {
    offerId: offer.id,
    machineId: offer.machine_id,
    hostId: offer.host_id,
    gpuName: offer.gpu_name,
    numGpus: offer.num_gpus,
    gpuRamMb: offer.gpu_ram,
    cpuRamMb: ramShareMb(offer.cpu_ram, offer.cpu_cores, offer.cpu_cores_effective),
    dphTotal: expectedDph(offer, diskGb),
    searchedDph: offer.dph_total,
    storageCost: offer.storage_cost ?? null,
    minBid: offer.min_bid ?? null,
  };
}

/** Facts of an instance found by its label (a lost create answer): RAM is the renter's share, as from the offer. */
export function factsFromInstance(offerId: number, inst: Instance): OfferFacts {
  return {
    offerId,
    machineId: inst.machine_id ?? 0,
    hostId: inst.host_id ?? 0,
    gpuName: inst.gpu_name ?? 'unknown',
    numGpus: inst.num_gpus ?? 1,
    cpuRamMb: ramShareMb(inst.cpu_ram ?? 0, inst.cpu_cores, inst.cpu_cores_effective),
    dphTotal: billedDph(inst) ?? 0,
    storageCost: inst.storage_cost ?? null,
  };
}
