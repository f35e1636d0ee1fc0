import { FailureType } from '../../workflows/failures.js';

/**
 * The documented rule that marks a machine bad (README, "Reputation"):
 * - once for failures that say the machine itself is unfit (OOM, crash, failed proofs, too slow, timed out);
 * - after two for failures that can be transient (transport errors, never running, host lost, daemon never ready).
 * Failures that are ours or the market's (offer taken, Vast API, operator cancel) never count.
 */
const AT_ONCE = new Set<string>([
  FailureType.DaemonOOM,
  FailureType.DaemonCrashed,
  FailureType.ProofFailed,
  FailureType.BenchRateBelowMin,
  FailureType.BenchmarkTimeout,
]);
const AFTER_TWO = new Set<string>([
  FailureType.DaemonTransportError,
  FailureType.InstanceNeverRunning,
  FailureType.HostLost,
  FailureType.HostNeverConnected,
  FailureType.DaemonNeverReady,
  FailureType.ParamfetchFailed,
]);

export function shouldMarkBad(failureType: string, countForType: number): boolean {
  if (AT_ONCE.has(failureType)) return countForType >= 1;
  if (AFTER_TWO.has(failureType)) return countForType >= 2;
  return false;
}

export function countsAgainstMachine(failureType: string): boolean {
  return AT_ONCE.has(failureType) || AFTER_TWO.has(failureType);
}
