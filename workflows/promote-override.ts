import type { PromoteOverride } from './lifecycle/verdict.js';
import type { LifecycleStatus } from './domain/types.js';
import { fmtRate } from './ui/text.js';

export type { PromoteOverride };

export interface PromoteAnswer {
  accepted: true;
  /** The stage the lifecycle was in when it accepted the override. */
  stage: string;
  /** When it takes effect, in words. */
  appliesAt: string;
}

/**
 * Why a promote override is refused, or null when it is accepted. After the verdict there is nothing
 * left to override: the answer names the verdict ("verdict already given: killed BenchRateBelowMin").
 */
export function promoteRefusal(status: LifecycleStatus, o: PromoteOverride): string | null {
  if (!o.operator.trim()) return 'an override needs the operator who gives it';
  if (!o.reason.trim()) return 'an override needs a reason';
  if (status.failureType !== null || status.stage === 'killing' || status.stage === 'killed')
    return `verdict already given: killed ${status.failureType ?? ''}`.trimEnd();
  if (status.stage === 'promoted')
    return `verdict already given: promoted${status.rate === null ? '' : ` at ${fmtRate(status.rate)}`}`;
  return null;
}

export function promoteAnswer(status: LifecycleStatus): PromoteAnswer {
  return {
    accepted: true,
    stage: status.stage,
    appliesAt:
      status.stage === 'evaluating'
        ? 'the verdict being given now: the lifecycle is promoted whatever its rate'
        : 'the benchmark verdict: the lifecycle is promoted whatever its rate, after the full batch is measured',
  };
}
