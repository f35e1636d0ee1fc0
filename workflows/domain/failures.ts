/**
 * Every reason a lifecycle can end without promotion. One list, shared by activities
 * (which throw them), workflows (which decide on them), the store and the README.
 */
export const FailureType = {
  BenchmarkTimeout: 'BenchmarkTimeout',
  BenchRateBelowMin: 'BenchRateBelowMin',
  DaemonTransportError: 'DaemonTransportError',
  DaemonCrashed: 'DaemonCrashed',
  DaemonOOM: 'DaemonOOM',
  DaemonNeverReady: 'DaemonNeverReady',
  ProofFailed: 'ProofFailed',
  ProofDeadlineExceeded: 'ProofDeadlineExceeded',
  ParamfetchFailed: 'ParamfetchFailed',
  /** The fitness gate found the host unable to work (fewer/other GPUs, less VRAM, broken driver, disk, network). */
  HostUnfit: 'HostUnfit',
  /**
   * The fitness gate could not read the host (a probe that would not run, output in no form we know, a
   * field the offer's claim needs given as [N/A]): no evidence either way; the raw output is in the details.
   */
  HostUnreadable: 'HostUnreadable',
  /** The benchmark's C1 input is absent and our configuration cannot supply it (no URL, bad URL, wrong checksum). */
  BenchInputMissing: 'BenchInputMissing',
  /** The C1 input's download stalled or broke on the host's network. */
  BenchInputFetchFailed: 'BenchInputFetchFailed',
  InstanceNeverRunning: 'InstanceNeverRunning',
  HostNeverConnected: 'HostNeverConnected',
  OfferUnavailable: 'OfferUnavailable',
  HostLost: 'HostLost',
  RateDegraded: 'RateDegraded',
  PriceAboveBudget: 'PriceAboveBudget',
  /**
   * A host that proves fast enough but costs more per proof than the fleet allows: kept off at its verdict
   * (keep by the dollar) or retired for a cheaper one (rebalancing). The market's, not the host's doing.
   */
  PricedOut: 'PricedOut',
  /** An interruptible rental Vast stopped because a higher bid took the machine: the market's doing, not the host's. */
  Preempted: 'Preempted',
  /** Every bid we were allowed to place (up to the policy's cap) was under the offer's min_bid at create. */
  BidTooLow: 'BidTooLow',
  /** A host claimed a rate its GPUs cannot do, or timings too uniform to be measured (workflows/domain/policy/claims.ts). */
  ImplausibleResult: 'ImplausibleResult',
  /**
   * The server failed a host step for the host's own payload: a heartbeat, result or failure over the
   * server's size limit (workflows/classify.ts). The host's doing, whatever the step was.
   */
  HostPayloadTooLarge: 'HostPayloadTooLarge',
  /**
   * A host step failed with a type hosts do not report (only the fitness gate's and daemon supervision's
   * are taken from a host: workflows/domain/host-evidence.ts), or with one but without its evidence.
   */
  HostMisreported: 'HostMisreported',
  /** A host step failed with an error the GPU-host worker could not classify (its own Internal): whose, unknown. */
  HostStepError: 'HostStepError',
  /** A promoted host retired before its per-rental token expires (HOST_TOKEN_TTL_DAYS): the host loses its queue then. */
  HostTokenExpiring: 'HostTokenExpiring',
  /**
   * A host step's deadline passed while we could not hear the host (the server or the control worker was
   * unreachable for part of its window) and the host's kept result could not be collected: no evidence.
   */
  BenchmarkUnobserved: 'BenchmarkUnobserved',
  VastApiError: 'VastApiError',
  CancelledByOperator: 'CancelledByOperator',
  DestroyFailed: 'DestroyFailed',
  Orphaned: 'Orphaned',
  Internal: 'Internal',
} as const;

export type FailureType = (typeof FailureType)[keyof typeof FailureType];

export const ALL_FAILURE_TYPES: readonly FailureType[] = Object.values(FailureType);

export function isFailureType(value: unknown): value is FailureType {
  return typeof value === 'string' && (ALL_FAILURE_TYPES as readonly string[]).includes(value);
}

/** Evidence attached to a failure so an operator sees the cause after the instance is gone. */
export interface HostDiagnostics {
  exitCode?: number | null;
  signal?: string | null;
  daemonLogTail?: string;
  outputTail?: string;
  grpcCode?: number;
  grpcMessage?: string;
}

/** Bounded size of each log tail carried in failure details and history. */
export const LOG_TAIL_MAX_CHARS = 4000;

export function boundTail(text: string, max = LOG_TAIL_MAX_CHARS): string {
  return text.length <= max ? text : '…' + text.slice(text.length - max + 1);
}
