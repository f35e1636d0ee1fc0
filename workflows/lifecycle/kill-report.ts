import { ApplicationFailure } from '@temporalio/workflow';
import type { Classified } from '../classify.js';
import { verdictFor } from '../domain/policy/verdicts.js';
import type { LifecycleInput, Stage } from '../domain/types.js';
import { type KillFacts, killDetails, killMessage, killSummary } from '../ui/kill-report.js';
import type { Journal } from './journal.js';

/**
 * How a killed lifecycle ends, after its instance was destroyed: type, cause and cost once in the
 * message; the details lead with a human summary, the raw evidence and the ledger after it. The current
 * details in the UI say the same.
 */
export function killedFailure(
  failure: Classified,
  failedStage: Stage,
  journal: Journal,
  input: LifecycleInput,
): ApplicationFailure {
  const { view } = journal;
  // The ledger's figures (policy/cost.ts): real units, stopped at the destroy.
  const cost = journal.cost.now();
  const facts: KillFacts = {
    type: failure.type,
    cause: failure.message,
    stage: failedStage,
    details: failure.details,
    diagnostics: failure.diagnostics ?? view.diagnostics,
    costUsd: cost ? cost.totalUsd : null,
    dph: cost ? cost.dph : view.dph,
    rentedForMs: cost ? cost.rentedSec * 1000 : null,
    minRate: input.minRate,
    concurrency: view.concurrency,
  };
  view.killed(killSummary(facts, true));
  return ApplicationFailure.create({
    type: failure.type,
    message: killMessage(facts),
    nonRetryable: true,
    details: [{ ...killDetails(facts), verdict: verdictFor(failure.type).verdict, cost }],
  });
}
