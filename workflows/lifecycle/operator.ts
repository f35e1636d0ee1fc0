import { setHandler } from '@temporalio/workflow';
import { benchmarkProgressSignal, type KillRequest, killRequestSignal, promoteOverrideUpdate } from '../definitions.js';
import { promoteAnswer, promoteRefusal } from '../promote-override.js';
import type { Journal } from './journal.js';
import type { PromoteOverride } from './verdict.js';

/**
 * What the lifecycle answers while it runs: the host's benchmark progress, and the operator's promote
 * override — an Update answered before the verdict and refused with the verdict after it — and the words
 * of an operator's kill, kept for the cancel that follows them.
 */
export function answerOperators(
  journal: Journal,
  override: { promote: PromoteOverride | null; kill: KillRequest | null },
): void {
  setHandler(benchmarkProgressSignal, (p) => journal.view.progress(p));
  setHandler(killRequestSignal, (k) => {
    override.kill = { reason: k.reason.slice(0, 500), by: k.by.slice(0, 100) };
  });
  setHandler(
    promoteOverrideUpdate,
    (o) => {
      // Who and why are in history: the Update's accepted event carries its input.
      override.promote = o;
      return promoteAnswer(journal.status);
    },
    {
      validator: (o) => {
        const refusal = promoteRefusal(journal.status, o);
        if (refusal) throw new Error(refusal);
      },
    },
  );
}
