import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../workflows/domain/failures.js';
import { call, retryable } from './call.js';
import { type VastClient, VastHttpError } from './client.js';
import type { VastActivityDeps } from './deps.js';
import { backoffMs, toVastFailure } from './errors.js';
import type { Instance } from './schemas.js';

/** What vast-cli's self-test accepts as gone after a destroy, besides null or a 404. */
const GONE_STATES = new Set(['destroyed', 'terminated']);

/** DELETE, then a confirming show. Only Vast's word that the instance is gone ends it; anything else is retried. */
export async function destroyAndConfirm(vast: VastClient, instanceId: number): Promise<{ alreadyGone: boolean }> {
  const attempt = Context.current().info.attempt;
  let alreadyGone = false;
  try {
    await vast.destroyInstance(instanceId);
  } catch (err) {
    if (err instanceof VastHttpError && err.isAuth) throw toVastFailure(err, attempt);
    if (err instanceof VastHttpError && err.isInstanceGone) alreadyGone = true;
    else if (!(err instanceof VastHttpError)) throw retryable(err, attempt);
    // Any other refusal (e.g. 200 success:false): the confirming show below says whether it is gone.
  }
  let after: Instance | null;
  try {
    after = await vast.showInstance(instanceId);
  } catch (err) {
    if (err instanceof VastHttpError && err.isInstanceGone) return { alreadyGone };
    if (err instanceof VastHttpError && err.isAuth) throw toVastFailure(err, attempt);
    // A garbled or lost confirmation is retried like any other answer, never taken as a final failure.
    throw retryable(err, attempt);
  }
  if (after !== null && !GONE_STATES.has(after.actual_status ?? '') && after.cur_state !== 'unloaded') {
    throw ApplicationFailure.create({
      type: FailureType.VastApiError,
      message: `instance ${instanceId} still ${after.actual_status ?? 'present'} after destroy`,
      nextRetryDelay: backoffMs(attempt),
    });
  }
  return { alreadyGone };
}

/** Destroys and confirms; an instance that is already gone counts as destroyed. */
export async function destroyInstance(deps: VastActivityDeps, instanceId: number): Promise<{ alreadyGone: boolean }> {
  return destroyAndConfirm(deps.vast, instanceId);
}

/**
 * Destroys every instance carrying this lifecycle's label: a create whose answer was lost, or whose
 * request reached Vast late, leaves one the lifecycle never learnt the id of.
 */
export async function destroyLabelled(deps: VastActivityDeps, label: string): Promise<{ destroyed: number[] }> {
  const found = await call(() => deps.vast.listInstances({ label: { eq: label } }));
  const destroyed: number[] = [];
  for (const inst of found.filter((i) => i.label === label)) {
    await destroyAndConfirm(deps.vast, inst.id);
    destroyed.push(inst.id);
  }
  if (destroyed.length > 0) log.warn(`destroyed instance(s) ${destroyed.join(', ')} labelled ${label}`);
  return { destroyed };
}
