import { randomUUID } from 'node:crypto';
import type { createStoreActivities } from '../../activities/store/activities.js';
import type { OfferFacts } from '../../workflows/domain/types.js';

type Store = ReturnType<typeof createStoreActivities>;

/** Machine ids of one test file's own block above `base`: the test database is shared by every file. */
export const machineBlock = (base: number): number => base + Math.floor(Math.random() * 1_000_000) * 10;

/** A 2x RTX 4090 offer on `machineId` (its offer id is the machine's plus one). */
export function offerOn(machineId: number, dphTotal = 0.8): OfferFacts {
  return {
    offerId: machineId + 1,
    machineId,
    hostId: 1,
    gpuName: 'RTX 4090',
    numGpus: 2,
    cpuRamMb: 257_024,
    dphTotal,
  };
}

/** A rental on `machineId` recorded as the lifecycle records it after the rent; returns its ids. */
export async function recordRental(
  store: Store,
  machineId: number,
  over: Partial<Parameters<Store['recordInstance']>[0]> & { keyPrefix?: string; dphTotal?: number } = {},
) {
  const { keyPrefix = 'test', dphTotal, ...rest } = over;
  const ids = {
    rentalKey: `${keyPrefix}-${machineId}.${randomUUID()}`,
    workflowId: `instance-offer-${machineId + 1}`,
  };
  await store.recordInstance({
    ...ids,
    offerId: machineId + 1,
    instanceId: 1,
    offer: offerOn(machineId, dphTotal),
    label: ids.rentalKey,
    stage: 'evaluating',
    ...rest,
  });
  return ids;
}
