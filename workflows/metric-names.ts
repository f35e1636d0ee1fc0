/**
 * The fleet's event counters (name and help), shared by the workflows that increment them and the
 * worker that exports them at zero from startup (workers/fleet-collector.ts): an alert on increase()
 * cannot see the first increment of a series that did not exist before it.
 */
export const FLEET_EVENT_COUNTERS = {
  destroyFailed: { name: 'fleet_destroy_failed_total', help: 'destroys that failed; the instance may still bill' },
  budgetRefusals: {
    name: 'fleet_budget_refusals_total',
    help: 'scaler runs short of target refused by the $/h budget',
  },
  orphansDestroyed: { name: 'fleet_orphans_destroyed_total', help: 'orphan instances destroyed by the reconciler' },
} as const;
