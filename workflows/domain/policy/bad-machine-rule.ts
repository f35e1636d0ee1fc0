import { isFailureType } from '../failures.js';
import { countsOnMachine, type MarkContext, markDecision, type MarkDecision } from './verdicts.js';

/**
 * The documented rule that marks a machine bad (docs/operating.md, "Reputation"), read from the one
 * verdict table (workflows/domain/policy/verdicts.ts): a `kill` marks at once, an `inconclusive` of a
 * transient or network cause only when it recurs; every mark expires; the rest never count, nor does a
 * kill judged against a bar an operator set for one deploy.
 */
export function shouldMarkBad(failureType: string, countForType: number): boolean {
  return markFor(failureType, countForType).mark;
}

export function markFor(
  failureType: string,
  countForType: number,
  transientMarkSec?: number,
  ctx: MarkContext = {},
): MarkDecision {
  if (!isFailureType(failureType)) return { mark: false, expiresInSec: null };
  return markDecision(failureType, countForType, transientMarkSec, ctx);
}

export function countsAgainstMachine(failureType: string, ctx: MarkContext = {}): boolean {
  return isFailureType(failureType) && countsOnMachine(failureType, ctx);
}
