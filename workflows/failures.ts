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
  InstanceNeverRunning: 'InstanceNeverRunning',
  HostNeverConnected: 'HostNeverConnected',
  OfferUnavailable: 'OfferUnavailable',
  HostLost: 'HostLost',
  RateDegraded: 'RateDegraded',
  PriceAboveBudget: 'PriceAboveBudget',
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
