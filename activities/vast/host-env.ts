import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../workflows/domain/failures.js';
import { hostTaskQueue } from '../../workflows/domain/task-queues.js';
import { errText } from './call.js';
import type { VastActivityDeps } from './deps.js';

/** The instance's env: the worker's host settings, the rental's queue and, with a token key, its own token. */
export function hostEnvFor(
  deps: VastActivityDeps,
  input: { label: string; hostTaskQueue: string },
): Record<string, string> {
  const env = { ...deps.hostEnv, HOST_TASK_QUEUE: input.hostTaskQueue, INSTANCE_LABEL: input.label };
  if (!deps.hostToken) return env;
  const internal = (message: string) =>
    ApplicationFailure.create({ type: FailureType.Internal, message, nonRetryable: true });
  // The server lets a token poll host/<label> only: another queue would leave the host polling in vain.
  if (input.hostTaskQueue !== hostTaskQueue(input.label)) {
    throw internal(`host queue ${input.hostTaskQueue} is not ${hostTaskQueue(input.label)}: no host token fits it`);
  }
  const { namespace, workflowExecution } = Context.current().info;
  if (!workflowExecution) throw internal('rentOffer ran outside a workflow: no lifecycle to bind a host token to');
  try {
    const token = deps.hostToken({ namespace, label: input.label, workflowId: workflowExecution.workflowId });
    return { ...env, TEMPORAL_API_KEY: token };
  } catch (err) {
    throw internal(`no host token for this rental: ${errText(err)}`);
  }
}
