import type { ApplicationFailure } from '@temporalio/workflow';
import { killFailure } from '../classify.js';
import { FailureType } from '../domain/failures.js';
import { describeImplausible, implausibleEvidence } from '../domain/policy/claims.js';
import type { ProofTiming, RentedInstance } from '../domain/types.js';

/**
 * The host's self-reported rate and timings, checked against what its GPUs can do
 * (workflows/domain/policy/plausibility-bounds.json): an ImplausibleResult to kill it with, or null.
 * The rate and timings are real: the lifecycle converted them with its Clock where they entered it.
 */
export function implausibleClaim(
  inst: RentedInstance,
  rate: number,
  timings: readonly ProofTiming[],
  where: 'benchmark' | 'production',
): ApplicationFailure | null {
  const evidence = implausibleEvidence({ gpuName: inst.offer.gpuName, gpus: inst.offer.numGpus, rate, timings });
  if (evidence === null) return null;
  return killFailure(FailureType.ImplausibleResult, `${where}: ${describeImplausible(evidence)}`, {
    ...evidence,
    where,
    ...(timings.length > 0 ? { timings } : {}),
  });
}
