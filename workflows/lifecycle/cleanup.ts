import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { VastActivities } from '../../activities/vast/activities.js';
import { destroyOptions } from '../activity-options.js';
import type { Classified } from '../classify.js';
import { FailureType } from '../domain/failures.js';
import { formatCost } from '../domain/policy/cost.js';
import type { HostSteps } from './host-steps.js';
import { vastSummary } from '../ui/summaries.js';
import { summarized } from '../ui/summarized.js';
import type { Journal } from './journal.js';

const cleanupVast = summarized(proxyActivities<VastActivities>(destroyOptions), vastSummary);

interface KillContext {
  journal: Journal;
  host: HostSteps;
  /** The lifecycle's label: what Vast's instances of this rental carry. */
  label: string;
}

/**
 * The kill path: evidence from the host, then the destroy, then the records. No store write comes
 * before the destroy, so a Postgres outage (the writes wait it out) cannot keep an instance billing.
 * Run by the caller in a non-cancellable scope: a rented instance bills until destroyed.
 */
export async function killInstance(k: KillContext, failure: Classified): Promise<void> {
  k.journal.killing(failure);
  k.journal.markStage('killing');
  const killingAt = new Date().toISOString();
  const diag = await evidence(k, failure);
  k.journal.view.collected(diag);
  const rented = k.journal.rented;
  let destroyErr: unknown = null;
  let rentedDestroyed = false;
  if (rented) {
    try {
      await cleanupVast.destroyInstance(rented.instanceId);
      // Billing stops here: so does the cost.
      k.journal.cost.destroyed();
      rentedDestroyed = true;
    } catch (err) {
      destroyErr = err;
    }
  }
  // A create whose answer was lost (or whose request reached Vast late) leaves an instance under our label.
  const destroyed = (await destroyLabelled(k)) || rentedDestroyed;
  await k.journal.recordStage('killing', { failureType: failure.type, message: failure.message }, killingAt);
  await saveTails(k.journal, diag);
  await k.journal.recordKill(failure, destroyed);
  if (rented && !rentedDestroyed) return await destroyFailed(k.journal, rented.instanceId, failure, destroyErr);
  await k.journal.killed(failure, destroyed);
}

/** The host's own account (daemon log tail, output), unless the failure brought it or the host is gone. */
async function evidence(k: KillContext, failure: Classified) {
  if (failure.diagnostics) return failure.diagnostics;
  return k.host.answered && failure.type !== FailureType.HostLost ? await k.host.collectDiagnostics() : undefined;
}

async function saveTails(journal: Journal, diag: { daemonLogTail?: string; outputTail?: string } | undefined) {
  const { store, ids } = journal;
  if (diag?.daemonLogTail) await store.saveLogTail({ ...ids, source: 'cuzk-daemon', text: diag.daemonLogTail });
  if (diag?.outputTail) await store.saveLogTail({ ...ids, source: 'output', text: diag.outputTail });
}

/** Destroys every instance carrying this lifecycle's label; true when it found one. Never hides the kill's cause. */
async function destroyLabelled({ journal, label }: KillContext): Promise<boolean> {
  try {
    const { destroyed } = await cleanupVast.destroyLabelled(label);
    if (destroyed.length === 0) return false;
    await journal.note(`destroyed instance(s) ${destroyed.join(', ')} found under this lifecycle's label`, {
      destroyed,
      label,
    });
    return true;
  } catch (err) {
    await journal.note(
      `could not check Vast for instances labelled ${label}; the orphan reconciler will: ${err instanceof Error ? err.message : String(err)}`,
      { label },
    );
    return false;
  }
}

/** Money may be leaking: fail loudly with the instance to destroy by hand, after counting and telling. */
async function destroyFailed(journal: Journal, instanceId: number, failure: Classified, err: unknown): Promise<never> {
  await journal.destroyFailed(instanceId, failure.type);
  throw ApplicationFailure.create({
    type: FailureType.DestroyFailed,
    message: `instance ${instanceId} could not be destroyed and may still be billing; destroy it by hand (${formatCost(journal.cost.now())} so far)`,
    nonRetryable: true,
    details: [{ instanceId, killReason: failure.type, cost: journal.cost.now() }],
    cause: err instanceof Error ? err : undefined,
  });
}
