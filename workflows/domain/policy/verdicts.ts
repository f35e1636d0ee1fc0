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
   * How it counts against the machine: `at-once` marks it from the first occurrence, `repeated` only
   * when the same type recurs on it, `never` does not count. Every mark expires (`markDecision`).
   */
  marks: 'at-once' | 'repeated' | 'never';
  /** Seconds a first `at-once` mark lasts (doubled per further kill of the type on the machine, capped). */
  markSec?: number;
  /**
   * Judged against the keep/kill bar (minRate, or the watch's floor from it): under a bar an operator set
   * for one deploy (`deploy --min-rate`) the kill judges that rental, not the machine, and marks nothing.
   */
  onBar?: boolean;
  /** The lifecycle rents the offer once more (bounded by `reputation.inconclusiveRetries`). */
  retry: boolean;
}

/**
 * A host kill's first mark lasts a week: long enough that the scaler does not rent a bad machine again
 * the same week (its offer often reappears within hours), short enough that a machine its host has
 * repaired, or one misjudged once, comes back; back from an expired mark it proves a full batch on
 * probation (no early promote). A second kill of the same type on it doubles the mark, up to 90 days.
 */
export const KILL_MARK_SEC = 7 * 24 * 3600;
/**
 * A benchmark timeout's first mark lasts 3 days: the deadline is only evidence when we were listening
 * (workflows/lifecycle/benchmark.ts), and even then it says the batch did not finish, not which proof
 * hung or why: the weakest of the host kills, so the shortest mark.
 */
export const TIMEOUT_MARK_SEC = 3 * 24 * 3600;
export const MAX_KILL_MARK_SEC = 90 * 24 * 3600;

const kill = (over: Pick<VerdictRule, 'markSec' | 'onBar'> = {}): VerdictRule => ({
  verdict: 'kill',
  cause: 'host',
  marks: 'at-once',
  retry: false,
  markSec: KILL_MARK_SEC,
  ...over,
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
  [FT.BenchmarkTimeout]: kill({ markSec: TIMEOUT_MARK_SEC }),
  [FT.BenchRateBelowMin]: kill({ onBar: true }),
  [FT.DaemonCrashed]: kill(),
  [FT.DaemonOOM]: kill(),
  [FT.ProofFailed]: kill(),
  [FT.ProofDeadlineExceeded]: kill(),
  [FT.RateDegraded]: kill({ onBar: true }),
  // A host that claims what its GPUs cannot do (workflows/domain/policy/claims.ts) is not worth renting again.
  [FT.ImplausibleResult]: kill(),
  // A host that overflows the server with its own payload, or names a failure hosts do not report (or
  // one without its evidence) to end its rental its own way: evidence against it, as a lie is.
  [FT.HostPayloadTooLarge]: kill(),
  [FT.HostMisreported]: kill(),
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
  // Our worker's unclassified error on the host: a bug of ours or the machine, like a lost host.
  [FT.HostStepError]: inconclusive('transient', 'repeated', true),
  [FT.BenchInputFetchFailed]: inconclusive('network', 'repeated', true),
  // We could not read the host's probes: as far as the evidence tells, the failure is in our reading
  // ('ours': no cause says "nobody knows", and 'host' is for evidence). One occurrence marks nothing; the
  // same machine unreadable again is marked for a while (a host that hides its hardware from us), and
  // a fresh rental may read it.
  [FT.HostUnreadable]: inconclusive('ours', 'repeated', true),
  // The market's: the offer is gone or dearer; the scaler decides again, at the price it finds then.
  [FT.OfferUnavailable]: inconclusive('market', 'never', false),
  [FT.PriceAboveBudget]: inconclusive('market', 'never', false),
  // Proves, but dearer per proof than the fleet can have elsewhere: a better deal, not a bad host.
  [FT.PricedOut]: inconclusive('market', 'never', false),
  // Outbid, or every allowed bid under min_bid: the market took it; the scaler rents again at what it finds.
  [FT.Preempted]: inconclusive('market', 'never', false),
  [FT.BidTooLow]: inconclusive('market', 'never', false),
  // Our outage over the benchmark's deadline, and the host's batch could not be collected: nothing was
  // measured. The offer may be rented once more: the machine did nothing wrong that we know of.
  [FT.BenchmarkUnobserved]: inconclusive('ours', 'never', true),
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
  /** Seconds until the mark expires; null only for no mark (an operator's own mark is the store's, not this). */
  expiresInSec: number | null;
}

/** What the rule knows of the kill besides its type and count. */
export interface MarkContext {
  /** The keep/kill bar was an operator's per-deploy override (`deploy --min-rate`), not the fleet's. */
  operatorBar?: boolean;
}

/** Does this failure count against the machine at all (`operatorBar`: a bar-judged kill under it does not)? */
export function countsOnMachine(failureType: FailureType, ctx: MarkContext = {}): boolean {
  const rule = FAILURE_VERDICTS[failureType];
  return rule.marks !== 'never' && !(ctx.operatorBar === true && rule.onBar === true);
}

/**
 * The bad-machine rule, from the table. No single event marks a machine for good: a kill marks it from
 * its first occurrence for the rule's `markSec` (a week; a benchmark timeout 3 days), doubled per further
 * kill of the same type (capped at 90 days); a `repeated` type marks it from its second occurrence, for
 * `transientMarkSec` doubled per further strike (capped at 30 days). A kill judged against a bar an
 * operator set for one deploy marks nothing.
 */
export function markDecision(
  failureType: FailureType,
  countForType: number,
  transientMarkSec: number = TRANSIENT_MARK_SEC,
  ctx: MarkContext = {},
): MarkDecision {
  const rule = FAILURE_VERDICTS[failureType];
  if (!countsOnMachine(failureType, ctx)) return { mark: false, expiresInSec: null };
  if (rule.marks === 'at-once' && countForType >= 1) {
    const sec = Math.min((rule.markSec ?? KILL_MARK_SEC) * 2 ** (countForType - 1), MAX_KILL_MARK_SEC);
    return { mark: true, expiresInSec: Math.round(sec) };
  }
  if (rule.marks === 'repeated' && countForType >= 2) {
    const sec = Math.min(
      transientMarkSec * 2 ** (countForType - 2),
      Math.max(transientMarkSec, MAX_TRANSIENT_MARK_SEC),
    );
    return { mark: true, expiresInSec: Math.round(sec) };
  }
  return { mark: false, expiresInSec: null };
}
