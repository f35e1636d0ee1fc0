import type { ApplicationFailure } from '@temporalio/workflow';
import { killFailure } from '../classify.js';
import { FailureType } from '../domain/failures.js';
import { describeImplausible, implausibleEvidence } from '../domain/policy/claims.js';
import type { ProofTiming, RentedInstance } from '../domain/types.js';

/**
 * The host's self-reported rate and timings, checked against what its GPUs can do
 * (workflows/domain/policy/plausibility-bounds.json): an ImplausibleResult to kill it with, or null.
 * `timeScale` is the lifecycle's input: how much of the host's clock the caller already converted.
 */
export function implausibleClaim(
  inst: RentedInstance,
  rate: number,
  timings: readonly ProofTiming[],
  where: 'benchmark' | 'production',
  timeScale: number,
): ApplicationFailure | null {
  // The rate and timings come in real units once the lifecycle converts the hosts' clock (its timeScale
  // input, policy/clock.ts); the bounds then need scaling only by what is left unconverted.
  const clockScale = (inst.clockScale ?? 1) / timeScale;
  const evidence = implausibleEvidence({
    gpuName: inst.offer.gpuName,
    gpus: inst.offer.numGpus,
    rate,
    timings,
    clockScale,
  });
  if (evidence === null) return null;
  return killFailure(FailureType.ImplausibleResult, `${where}: ${describeImplausible(evidence)}`, {
    ...evidence,
    where,
    clockScale,
    ...(timings.length > 0 ? { timings } : {}),
  });
}
