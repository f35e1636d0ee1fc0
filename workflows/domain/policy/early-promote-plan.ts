import type { BenchmarkReport, LifecycleInput } from '../types.js';
import { proofsPerHour } from './rate.js';
import type { EarlyPromoteEvidence } from './early-promote.js';
import type { Confidence } from './student-t.js';

export type Standing = 'good' | 'probation' | 'bad';

/**
 * What the benchmark may promote on early: nothing on probation (a machine back from an expired mark
 * proves its whole batch: fewer proofs trusted), nor when an operator already chose to keep the host.
 * Judged after a full round and never before the early-stop floor, the same evidence both rules wait for.
 */
export function earlyPromotePlan(
  input: LifecycleInput,
  o: { standing: Standing; overridden: boolean; concurrency: number },
): { minRate: number; confidence: Confidence; minProofs: number } | undefined {
  if (!input.verdicts.earlyPromote || o.standing === 'probation' || o.overridden || input.minRate <= 0)
    return undefined;
  return {
    minRate: input.minRate,
    confidence: input.verdicts.confidence,
    minProofs: Math.max(input.earlyStopAfterProofs, o.concurrency),
  };
}

/** The promotion's reason in words, with units: what an operator reads in history and the store. */
export function earlyPromoteReason(e: EarlyPromoteEvidence): string {
  return (
    `promoted early after ${e.completed}/${e.requested} proofs: projected ${e.projectedRate} proofs/h; even at ` +
    `${Math.round(e.proofBoundMs / 100) / 10} s per remaining proof (${Math.round(e.confidence * 100)} % bound) ` +
    `the batch makes ${e.rateLowerBound} proofs/h >= ${e.minRate}`
  );
}

/** The host's benchmark rate: an early promotion's projection (its stopped batch's own rate understates it). */
export function benchRate(report: BenchmarkReport): number {
  return report.promotedEarly?.projectedRate ?? proofsPerHour(report.completed, report.elapsedMs);
}
