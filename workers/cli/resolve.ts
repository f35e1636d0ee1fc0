import type { Client } from '@temporalio/client';
import { LIFECYCLE_WORKFLOW_TYPE, lifecycleWorkflowId } from '../../workflows/domain/task-queues.js';
import { offerIdArg } from './args.js';
import { CliError } from './context.js';

/** Distinct lifecycle workflow ids starting with a prefix, at most `limit` of them. */
export type LifecycleIdLister = (prefix: string, limit: number) => Promise<string[]>;

const FULL_ID = /^instance-offer-[1-9][0-9]*$/;
/** What a workflow id is made of here; anything else could not be put in a visibility query safely. */
const ID_TEXT = /^[A-Za-z0-9._-]+$/;
/** Candidates named in an ambiguity error: enough to pick from, not a page of them. */
const SHOWN = 10;

/**
 * The lifecycle a command acts on, from what the operator typed: an offer id (`46714145`), a whole
 * workflow id, or a unique prefix of one (`instance-offer-4671`). An offer id needs no lookup; anything
 * else is looked up in visibility, where a whole id is also a prefix of longer ones (it wins when it
 * exists); what matches none or several is refused (exit 2) naming what it matched.
 */
export async function resolveLifecycleId(ref: string, list: LifecycleIdLister): Promise<string> {
  if (/^[0-9]+$/.test(ref)) {
    try {
      return lifecycleWorkflowId(offerIdArg(ref));
    } catch (err) {
      throw new CliError(err instanceof Error ? err.message : String(err), 2);
    }
  }
  if (!ID_TEXT.test(ref))
    throw new CliError(`'${ref}' is not an offer id or a workflow id (letters, digits, '.', '_', '-')`, 2);
  const ids = await list(ref, SHOWN + 1);
  if (ids.includes(ref)) return ref;
  if (ids.length === 1 && ids[0]) return ids[0];
  // A whole id visibility has not indexed yet (just started): the server answers for it directly.
  if (ids.length === 0 && FULL_ID.test(ref)) return ref;
  if (ids.length === 0)
    throw new CliError(
      `no lifecycle's workflow id starts with '${ref}' (list them: gpu-fleet fleet status -o name)`,
      2,
    );
  const named = ids.slice(0, SHOWN).join(', ') + (ids.length > SHOWN ? ', …' : '');
  throw new CliError(
    `'${ref}' matches ${ids.length > SHOWN ? `more than ${SHOWN}` : ids.length} lifecycles: ${named}; give more of the id, or the offer id`,
    2,
  );
}

/** The lister on Temporal visibility: lifecycles open or closed, re-rents of one offer counted once. */
export function visibilityLister(client: Client): LifecycleIdLister {
  return async (prefix, limit) => {
    const ids = new Set<string>();
    const runs = client.workflow.list({
      query: `WorkflowType = "${LIFECYCLE_WORKFLOW_TYPE}" AND WorkflowId STARTS_WITH "${prefix}"`,
    });
    for await (const wf of runs) {
      ids.add(wf.workflowId);
      if (ids.size >= limit) break;
    }
    return [...ids].sort();
  };
}
