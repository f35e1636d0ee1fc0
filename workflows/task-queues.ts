/** The only place task-queue names are built: workers, workflows and the CLI all import this. */
export const CONTROL_TASK_QUEUE = 'gpu-fleet-control';

/** Every instance this fleet rents carries a label with this prefix; the orphan reconciler looks for it. */
export const LABEL_PREFIX = 'gpufleet-';

/** Label put on the Vast instance; derived from the workflow id so replay yields the same value. */
export function instanceLabel(workflowId: string): string {
  return LABEL_PREFIX + workflowId.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 100);
}

/** Each rented host polls a queue of its own, so host activities can only run on that machine. */
export function hostTaskQueue(label: string): string {
  return `host/${label}`;
}

export function lifecycleWorkflowId(offerId: number, attempt = 1): string {
  return `instance-offer-${offerId}-${attempt}`;
}
