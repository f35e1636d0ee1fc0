/**
 * The fleet's event counters (name and help) as the worker's registry exports them
 * (workers/setup/metrics-registry.ts), at zero from startup, so a dashboard shows 0 rather than no data.
 * The registry appends `_total`: fleet_destroy_failed is scraped as fleet_destroy_failed_total.
 */
export const FLEET_EVENT_COUNTERS = {
  destroyFailed: { name: 'fleet_destroy_failed', help: 'destroys that failed; the instance may still bill' },
  budgetRefusals: {
    name: 'fleet_budget_refusals',
    help: 'scaler runs short of target refused by the $/h budget',
  },
  orphansDestroyed: { name: 'fleet_orphans_destroyed', help: 'orphan instances destroyed by the reconciler' },
} as const;
