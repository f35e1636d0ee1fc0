import { isFailureType } from '../failures.js';
import { markDecision, type MarkDecision, verdictFor } from './verdicts.js';

/**
 * The documented rule that marks a machine bad (docs/operating.md, "Reputation"), read from the one
 * verdict table (workflows/domain/policy/verdicts.ts): a `kill` marks at once and for good; an `inconclusive`
 * of a transient or network cause marks only when it recurs, and that mark expires; the rest never count.
 */
export function shouldMarkBad(failureType: string, countForType: number): boolean {
  return markFor(failureType, countForType).mark;
}

export function markFor(failureType: string, countForType: number, transientMarkSec?: number): MarkDecision {
  if (!isFailureType(failureType)) return { mark: false, expiresInSec: null };
  return markDecision(failureType, countForType, transientMarkSec);
}

export function countsAgainstMachine(failureType: string): boolean {
  return isFailureType(failureType) && verdictFor(failureType).marks !== 'never';
}
