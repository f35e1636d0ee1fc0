import type { WorkflowHandle } from '@temporalio/client';
import type { KillRequest } from '../../workflows/definitions.js';
import type { PromoteAnswer, PromoteOverride } from '../../workflows/promote-override.js';
import type { LifecycleStatus } from '../../workflows/domain/types.js';

/**
 * The lifecycle's query, update and signal by the names workflows/definitions.ts registers, so a CLI run
 * never loads the workflow SDK (@temporalio/workflow, whose define* only name them) at start;
 * test/cli/defaults.test.ts keeps each name the registered one.
 */
export const LIFECYCLE_MESSAGES = { status: 'status', promote: 'promote', killRequest: 'killRequest' } as const;

/** The lifecycle's `status` query. */
export function queryStatus(handle: WorkflowHandle): Promise<LifecycleStatus> {
  return handle.query<LifecycleStatus>(LIFECYCLE_MESSAGES.status);
}

/** Who kills the lifecycle and why, signalled just before the cancel. */
export function signalKillRequest(handle: WorkflowHandle, request: KillRequest): Promise<void> {
  return handle.signal<[KillRequest]>(LIFECYCLE_MESSAGES.killRequest, request);
}

/** The operator's promote override, as the Update the lifecycle answers. */
export function updatePromote(handle: WorkflowHandle, override: PromoteOverride): Promise<PromoteAnswer> {
  return handle.executeUpdate<PromoteAnswer, [PromoteOverride]>(LIFECYCLE_MESSAGES.promote, { args: [override] });
}
