/** The one workflowsPath: everything the control worker registers. */
export { instanceLifecycle } from './instance-lifecycle.js';
export { lifecycleStatusQuery } from './definitions.js';
export { fleetScaler } from './fleet-scaler.js';
export { orphanReconciler } from './orphan-reconciler.js';
export { machineAdmin, offerCheck, offerReport, webhookCheck } from './fleet-admin.js';
export { benchmarkProgressSignal, promoteOverrideUpdate } from './definitions.js';
