import { type AwaitRunningInput, awaitRunning } from './await-running.js';
import type { VastActivityDeps } from './deps.js';
import { destroyInstance, destroyLabelled } from './destroy.js';
import { type RentOfferInput, rentOffer } from './rent.js';
import { listFleetInstances, searchOffers } from './search.js';
import { changeBid, instanceState } from './watch.js';

// What the workflows and tests name from here besides the activities.
export { factsFromInstance, offerFacts } from './offer-facts.js';
export type { RentOfferInput } from './rent.js';
export type { OfferSearchResult } from './search.js';

/**
 * The control worker's Vast activities, each a function of these deps and its input (the files beside
 * this one, by concern); the names here are the activity names the workflows call.
 */
export function createVastActivities(deps: VastActivityDeps) {
  return {
    rentOffer: (input: RentOfferInput) => rentOffer(deps, input),
    searchOffers: (query: Record<string, unknown>) => searchOffers(deps, query),
    listFleetInstances: (labelPrefix: string) => listFleetInstances(deps, labelPrefix),
    instanceState: (instanceId: number) => instanceState(deps, instanceId),
    changeBid: (input: { instanceId: number; priceDph: number }) => changeBid(deps, input),
    awaitRunning: (input: AwaitRunningInput) => awaitRunning(deps, input),
    destroyInstance: (instanceId: number) => destroyInstance(deps, instanceId),
    destroyLabelled: (label: string) => destroyLabelled(deps, label),
  };
}

export type VastActivities = ReturnType<typeof createVastActivities>;
