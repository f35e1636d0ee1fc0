/** The one workflowsPath: everything the control worker registers. */
export { instanceLifecycle } from './instance-lifecycle.js';
export { lifecycleStatusQuery } from './definitions.js';
export { fleetScaler } from './fleet-scaler.js';
