import { Context, sleep } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../workflows/domain/failures.js';
import { call } from './call.js';
import { VastHttpError } from './client.js';
import type { VastActivityDeps } from './deps.js';
import { stoppingEvidence } from './instance-state.js';
import type { Instance } from './schemas.js';

export interface AwaitRunningInput {
  instanceId: number;
  /** Epoch ms (from workflow time) after which the instance counts as never running. */
  deadlineMs: number;
}

const NEVER_RUNNING_STATES = new Set(['exited', 'unknown', 'offline', 'stopped']);
const ERROR_STATUS_MSG = /error|failed|failure|exception|traceback|oci runtime|permission denied/i;

/** Polls until running; fails fast on states the docs say never reach running. */
export async function awaitRunning(deps: VastActivityDeps, input: AwaitRunningInput): Promise<{ status: string }> {
  const pollMs = deps.pollIntervalMs ?? 10_000;
  for (;;) {
    // A 404 for the instance (not an auth error) is Vast saying it is gone, like a null show.
    const last = await call(() =>
      deps.vast.showInstance(input.instanceId).catch((err: unknown) => {
        if (err instanceof VastHttpError && err.isInstanceGone) return null;
        throw err;
      }),
    );
    const status = last?.actual_status ?? null;
    Context.current().heartbeat({ status, statusMsg: last?.status_msg ?? null });
    if (last === null) throw neverRunning(input.instanceId, 'instance vanished (show answered null or 404)', last);
    if (status === 'running' && last.intended_status !== 'stopped') return { status };
    const why = notRunningEvidence(last, status, input.deadlineMs);
    if (why) throw neverRunning(input.instanceId, why, last);
    await sleep(Math.min(pollMs, Math.max(100, input.deadlineMs - Date.now())));
  }
}

/** Why an instance that is not running yet never will (null: keep waiting). */
function notRunningEvidence(last: Instance, status: string | null, deadlineMs: number): string | null {
  const stopping = stoppingEvidence(last);
  if (stopping) return stopping;
  if (status !== null && NEVER_RUNNING_STATES.has(status)) return `instance went ${status} before running`;
  if (last.status_msg && ERROR_STATUS_MSG.test(last.status_msg) && status !== 'loading') {
    return `instance reported an error: ${last.status_msg}`;
  }
  if (Date.now() >= deadlineMs) return `instance still ${status ?? 'provisioning'} at its deadline`;
  return null;
}

function neverRunning(instanceId: number, message: string, last: Instance | null): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.InstanceNeverRunning,
    message: `instance ${instanceId}: ${message}`,
    nonRetryable: true,
    details: [
      {
        actualStatus: last?.actual_status ?? null,
        intendedStatus: last?.intended_status ?? null,
        curState: last?.cur_state ?? null,
        nextState: last?.next_state ?? null,
        statusMsg: last?.status_msg ?? null,
      },
    ],
  });
}
