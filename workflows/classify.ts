import {
  ActivityFailure,
  ApplicationFailure,
  isCancellation,
  ServerFailure,
  TimeoutFailure,
} from '@temporalio/workflow';
import {
  boundTail,
  type FailureType,
  FailureType as FT,
  type HostDiagnostics,
  isFailureType,
} from './domain/failures.js';
import { hostReportProblem, SERVER_PAYLOAD_LIMIT_REASONS } from './domain/host-evidence.js';

export interface Classified {
  type: FailureType;
  message: string;
  details: Record<string, unknown>;
  diagnostics?: HostDiagnostics;
}

/**
 * Where the failing call ran; a timeout means different things on a host queue and on the Vast API.
 * `host-first` is the host's first step (a schedule-to-start timeout there: it never connected).
 */
export type Origin = 'vast' | 'store' | 'host-first' | 'host' | 'workflow';

const origins = new WeakMap<object, Origin>();

/**
 * Runs one call and tags what it throws with where it ran, so the classification of a failure comes
 * from the call that failed. The innermost tag wins (a host step's probe is not the step).
 */
export async function fromCall<T>(origin: Origin, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw tagOrigin(err, origin);
  }
}

/** Tags `err` with the origin of the call that threw it, unless a call nearer to it already did. */
export function tagOrigin(err: unknown, origin: Origin): unknown {
  if (typeof err === 'object' && err !== null && !origins.has(err)) origins.set(err, origin);
  return err;
}

/** The origin `fromCall` tagged an error with; a failure thrown by workflow code itself is `workflow`. */
export function originOf(err: unknown): Origin {
  return (typeof err === 'object' && err !== null && origins.get(err)) || 'workflow';
}

function firstDetail(failure: ApplicationFailure): Record<string, unknown> {
  const d: unknown = failure.details?.[0];
  return d !== null && typeof d === 'object' ? (d as Record<string, unknown>) : {};
}

/** An operator's cancel, with the words of the kill request that came with it: who, and why. */
export function withOperatorsWords(c: Classified, kill: { reason: string; by: string } | null): Classified {
  if (c.type !== FT.CancelledByOperator || kill === null) return c;
  return {
    ...c,
    message: `killed by ${kill.by}: ${kill.reason}`,
    details: { ...c.details, by: kill.by, reason: kill.reason },
  };
}

/** Maps whatever ended a step to the failure type an operator reads in history and search attributes. */
export function classify(err: unknown, origin: Origin = originOf(err)): Classified {
  if (isCancellation(err)) {
    return { type: FT.CancelledByOperator, message: 'lifecycle cancelled by an operator', details: {} };
  }
  const cause = err instanceof ActivityFailure ? err.cause : err;
  const host = origin === 'host' || origin === 'host-first';
  if (host && (cause instanceof ApplicationFailure || cause instanceof ServerFailure)) {
    const fromHost = classifyHostFailure(cause);
    if (fromHost) return fromHost;
  }
  if (cause instanceof ApplicationFailure && isFailureType(cause.type)) {
    const details = firstDetail(cause);
    const diagnostics = details.diagnostics as HostDiagnostics | undefined;
    return { type: cause.type, message: cause.message, details, diagnostics };
  }
  if (cause instanceof TimeoutFailure && (origin === 'host' || origin === 'host-first')) {
    const progress = cause.lastHeartbeatDetails ?? null;
    if (cause.timeoutType === 'SCHEDULE_TO_START') {
      return origin === 'host-first'
        ? { type: FT.HostNeverConnected, message: 'the GPU-host worker never polled its task queue', details: {} }
        : { type: FT.HostLost, message: 'the GPU-host worker stopped polling between steps', details: { progress } };
    }
    return {
      type: FT.HostLost,
      message: `the GPU-host worker went silent (${cause.timeoutType ?? 'timeout'} timeout)`,
      details: { timeoutType: cause.timeoutType, progress },
    };
  }
  if (cause instanceof TimeoutFailure && origin === 'vast') {
    return { type: FT.VastApiError, message: `Vast API call timed out (${cause.timeoutType})`, details: {} };
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return { type: FT.Internal, message: `${origin}: ${message}`, details: {} };
}

/**
 * How a host step's own failure is read: by us, not as the host names it (workflows/domain/host-evidence.ts).
 * A server failure the host's payload caused (over the size limit) is the host's; a type hosts report
 * is taken with its evidence; our worker's unclassified error (Internal, or no type of ours) is
 * HostStepError; any other type is HostMisreported. Null: not the host's to say (our server's own
 * failures stay Internal).
 */
function classifyHostFailure(cause: ApplicationFailure | ServerFailure): Classified | null {
  if (cause instanceof ServerFailure) {
    if (!SERVER_PAYLOAD_LIMIT_REASONS.includes(cause.message)) return null;
    return {
      type: FT.HostPayloadTooLarge,
      message: `the server failed the host's step: ${cause.message}`,
      details: { serverReason: cause.message },
    };
  }
  const details = firstDetail(cause);
  const diagnostics = details.diagnostics as HostDiagnostics | undefined;
  const claimed = cause.type ?? 'Error';
  if (claimed === FT.Internal || !isFailureType(claimed)) {
    return { type: FT.HostStepError, message: cause.message, details: { ...details, hostType: claimed }, diagnostics };
  }
  const problem = hostReportProblem(claimed, details);
  if (problem === null) return { type: claimed, message: cause.message, details, diagnostics };
  return {
    type: FT.HostMisreported,
    message: `the host ended its step as ${problem}`,
    // What it claimed, bounded: the host wrote it.
    details: { claimedType: claimed, claimedMessage: boundTail(cause.message, 500) },
  };
}

/**
 * A host step that timed out without one heartbeat: the server handed it out but the host never ran it
 * (a poll answer lost on the way, as under server overload or a restart), or the host died at once.
 * Every host step heartbeats as it starts, so only these two are possible; a probe tells them apart.
 */
export function lostBeforeFirstHeartbeat(err: unknown): boolean {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return (
    cause instanceof TimeoutFailure &&
    (cause.timeoutType === 'HEARTBEAT' || cause.timeoutType === 'START_TO_CLOSE') &&
    (cause.lastHeartbeatDetails ?? null) === null
  );
}

/** A host step the server timed out (heartbeat, start-to-close or schedule-to-start): the host may still be fine. */
export function hostTimedOut(err: unknown): boolean {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof TimeoutFailure;
}

export function timeoutTypeOf(err: unknown): string | null {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof TimeoutFailure ? (cause.timeoutType ?? null) : null;
}

export function failureTypeOf(err: unknown): string | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

/** Builds the failure of a kill the workflow decides itself (timer fired, rate too low), thrown into the cleanup path. */
export function killFailure(type: FailureType, message: string, details: Record<string, unknown>): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true, details: [details] });
}
