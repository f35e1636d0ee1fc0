import type { VastClient } from './client.js';
import type { Rental } from './host-token.js';

/** What the Vast activities are bound to (createVastActivities): one client and the worker's host settings. */
export interface VastActivityDeps {
  vast: VastClient;
  /** Environment a rented host needs to poll its own queue; comes from the worker's config, never from history. */
  hostEnv: Record<string, string>;
  /**
   * Mints the rental's own Temporal credential (host-token.ts) when the worker holds the host token key:
   * it goes into the instance's env only, never into the activity's result or a log.
   */
  hostToken?: (rental: Rental) => string;
  pollIntervalMs?: number;
}
