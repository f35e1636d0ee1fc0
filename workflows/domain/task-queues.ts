/** The only place task-queue names are built: workers, workflows and the CLI all import this. */
export const CONTROL_TASK_QUEUE = 'gpu-fleet-control';

/**
 * The lifecycle's workflow type, for code that lists lifecycles without loading workflow code (the
 * visibility activity); test/cli/defaults.test.ts keeps it equal to instanceLifecycle.name.
 */
export const LIFECYCLE_WORKFLOW_TYPE = 'instanceLifecycle';

/** Every instance this fleet rents carries a label with this prefix; the orphan reconciler looks for it. */
export const LABEL_PREFIX = 'gpufleet-';

/**
 * Label put on the Vast instance, derived from the rental key (README, "One identity per rental") so
 * each rental's instance, and the queue its host polls, is its own. Histories from before rental keys
 * pass the workflow id, which was the key then.
 */
export function instanceLabel(rentalKey: string): string {
  return LABEL_PREFIX + rentalKey.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 100);
}

/** Each rented host polls a queue of its own, so host activities can only run on that machine. */
export function hostTaskQueue(label: string): string {
  return `host/${label}`;
}

/**
 * The lifecycle's workflow id names the offer, not the rental: Temporal keeps a workflow id unique
 * among open executions, so at most one lifecycle per offer is open (a second start fails), and a
 * closed one's id can be started again to rent the offer again.
 */
export function lifecycleWorkflowId(offerId: number): string {
  return `instance-offer-${offerId}`;
}

/**
 * One rental: the workflow id (cut so the label keeps the whole key) and the run id of the
 * lifecycle's first run, which Temporal keeps across continue-as-new and which no other rental has.
 */
export function rentalKey(workflowId: string, firstRunId: string): string {
  return `${workflowId.slice(0, 60)}.${firstRunId}`;
}

const RUN_ID_SUFFIX = /\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The workflow id behind a label the store does not know (lost rows): a rental key's workflow id is
 * the part before its run id; a label from before rental keys is the workflow id itself.
 */
export function workflowIdOfLabel(label: string): string {
  return label.slice(LABEL_PREFIX.length).replace(RUN_ID_SUFFIX, '');
}
