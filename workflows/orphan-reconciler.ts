import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { StoreActivities } from '../activities/store/activities.js';
import type { TemporalActivities } from '../activities/temporal/activities.js';
import type { VastActivities } from '../activities/vast/activities.js';
import { destroyOptions, storeOptions, temporalVisibilityOptions, vastApiOptions } from './activity-options.js';
import { fleetMetrics } from './metrics.js';
import { notify } from './notify.js';
import { LABEL_PREFIX, workflowIdOfLabel } from './domain/task-queues.js';

const vast = proxyActivities<VastActivities>(vastApiOptions);
const cleanup = proxyActivities<VastActivities>(destroyOptions);
const temporal = proxyActivities<TemporalActivities>(temporalVisibilityOptions);
const store = proxyLocalActivities<StoreActivities>(storeOptions);

export interface ReconcileResult {
  checked: number;
  destroyed: Array<{ instanceId: number; label: string; workflowId: string }>;
}

/**
 * Run by a schedule: destroys every instance carrying this fleet's label that no running lifecycle
 * owns. A terminated workflow runs no cleanup, and a failed destroy leaves a bill: this catches both.
 */
export async function orphanReconciler(): Promise<ReconcileResult> {
  const instances = await vast.listFleetInstances(LABEL_PREFIX);
  const result: ReconcileResult = { checked: instances.length, destroyed: [] };
  // Sent while the loop goes on; awaited before returning (a closed workflow drops pending activities).
  const notifications: Promise<void>[] = [];
  for (const inst of instances) {
    const workflowId = (await store.workflowForLabel(inst.label)) ?? workflowIdOfLabel(inst.label);
    // Owned only by a running lifecycle of this very rental: its workflow id may have rented the offer again.
    if (await temporal.isWorkflowRunning(workflowId, inst.label)) continue;
    await cleanup.destroyInstance(inst.instanceId);
    await store.recordOrphanDestroyed({
      label: inst.label,
      workflowId,
      reason: `orphan: no running lifecycle owned instance ${inst.instanceId}`,
    });
    result.destroyed.push({ instanceId: inst.instanceId, label: inst.label, workflowId });
    fleetMetrics.orphanDestroyed();
    notifications.push(
      notify({
        kind: 'orphan_destroyed',
        workflowId,
        instanceId: inst.instanceId,
        reason: `no running lifecycle owned instance ${inst.instanceId}; destroyed`,
        at: new Date().toISOString(),
      }),
    );
  }
  await Promise.all(notifications);
  return result;
}
