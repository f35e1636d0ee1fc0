import { type FailureType, FailureType as FT } from '../failures.js';

/**
 * The three verdicts a benchmark ends in, never merged: `promote` (keep proving), `kill` (the host is
 * bad: destroyed, its machine marked) and `inconclusive` (the cause is ours, the network's, the
 * market's or a transient: destroyed, nothing marked, the offer or machine may be tried again).
 */
export type Verdict = 'promote' | 'kill' | 'inconclusive';

/** Whose fault a failure is, as far as the evidence tells. */
export type Cause = 'host' | 'transient' | 'network' | 'market' | 'ours' | 'operator';

export interface VerdictRule {
  verdict: Exclude<Verdict, 'promote'>;
  cause: Cause;
  /**
   * How it counts against the machine: `at-once` marks it bad for good; `repeated` marks it only when
   * the same type recurs on it, and that mark expires; `never` does not count.
   */
  marks: 'at-once' | 'repeated' | 'never';
  /** The lifecycle rents the offer once more (bounded by `reputation.inconclusiveRetries`). */
  retry: boolean;
}

const kill = (marks: VerdictRule['marks'] = 'at-once'): VerdictRule => ({
  verdict: 'kill',
  cause: 'host',
  marks,
  retry: false,
});
const inconclusive = (cause: Cause, marks: VerdictRule['marks'], retry: boolean): VerdictRule => ({
  verdict: 'inconclusive',
  cause,
  marks,
  retry,
});

/**
 * THE table: every failure type maps to exactly one verdict. The bad-machine rule, the lifecycle's
 * retry and docs/operating.md's failure table all read it (a test keeps the docs in step).
 */
export const FAILURE_VERDICTS: Readonly<Record<FailureType, VerdictRule>> = {
  [FT.BenchmarkTimeout]: kill(),
  [FT.BenchRateBelowMin]: kill(),
  [FT.DaemonCrashed]: kill(),
  [FT.DaemonOOM]: kill(),
  [FT.ProofFailed]: kill(),
  [FT.ProofDeadlineExceeded]: kill(),
  [FT.RateDegraded]: kill(),
  // A host that claims what its GPUs cannot do (workflows/domain/policy/claims.ts) is not worth renting again.
  [FT.ImplausibleResult]: kill(),
  // The fitness gate measured it unable to work: fewer/other GPUs, less VRAM, a broken driver, disk, link.
  [FT.HostUnfit]: kill(),
  // A dropped stream after its one restart, a daemon that never answered, a parameter download that
  // failed, a host preempted or never connected: one is weak evidence about the machine, a repeat is not.
  [FT.DaemonTransportError]: inconclusive('network', 'repeated', true),
  [FT.DaemonNeverReady]: inconclusive('transient', 'repeated', true),
  [FT.ParamfetchFailed]: inconclusive('network', 'repeated', true),
  [FT.InstanceNeverRunning]: inconclusive('transient', 'repeated', true),
  [FT.HostNeverConnected]: inconclusive('network', 'repeated', true),
  [FT.HostLost]: inconclusive('transient', 'repeated', true),
  [FT.BenchInputFetchFailed]: inconclusive('network', 'repeated', true),
  // The market's: the offer is gone or dearer; the scaler decides again, at the price it finds then.
  [FT.OfferUnavailable]: inconclusive('market', 'never', false),
  [FT.PriceAboveBudget]: inconclusive('market', 'never', false),
  // Outbid, or every allowed bid under min_bid: the market took it; the scaler rents again at what it finds.
  [FT.Preempted]: inconclusive('market', 'never', false),
  [FT.BidTooLow]: inconclusive('market', 'never', false),
  // Ours: never the machine's fault, and renting again would only repeat our problem.
  [FT.VastApiError]: inconclusive('ours', 'never', false),
  // Our credential's lifetime, not the machine: the scaler may rent it again (with a fresh token).
  [FT.HostTokenExpiring]: inconclusive('ours', 'never', false),
  [FT.DestroyFailed]: inconclusive('ours', 'never', false),
  [FT.Orphaned]: inconclusive('ours', 'never', false),
  [FT.Internal]: inconclusive('ours', 'never', false),
  // Our benchmark input: no URL configured, a URL that does not serve it, or a checksum that is not its own.
  [FT.BenchInputMissing]: inconclusive('ours', 'never', false),
  [FT.CancelledByOperator]: inconclusive('operator', 'never', false),
};

export function verdictFor(failureType: FailureType): VerdictRule {
  return FAILURE_VERDICTS[failureType];
}

/** Hours a first `repeated` mark lasts; each further strike on the same type doubles it (capped). */
export const TRANSIENT_MARK_SEC = 24 * 3600;
const MAX_TRANSIENT_MARK_SEC = 30 * 24 * 3600;

export interface MarkDecision {
  mark: boolean;
  /** Seconds until the mark expires; null for a mark that stands until an operator lifts it. */
  expiresInSec: number | null;
}

/**
 * The bad-machine rule, from the table: a kill marks the machine at once and for good; a `repeated`
 * type marks it from its second occurrence, for `transientMarkSec` doubled per further strike.
 */
export function markDecision(
  failureType: FailureType,
  countForType: number,
  transientMarkSec: number = TRANSIENT_MARK_SEC,
): MarkDecision {
  const rule = FAILURE_VERDICTS[failureType];
  if (rule.marks === 'at-once' && countForType >= 1) return { mark: true, expiresInSec: null };
  if (rule.marks === 'repeated' && countForType >= 2) {
    const sec = Math.min(
      transientMarkSec * 2 ** (countForType - 2),
      Math.max(transientMarkSec, MAX_TRANSIENT_MARK_SEC),
    );
    return { mark: true, expiresInSec: Math.round(sec) };
  }
  return { mark: false, expiresInSec: null };
}
