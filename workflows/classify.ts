import { ActivityFailure, ApplicationFailure, isCancellation, TimeoutFailure } from '@temporalio/workflow';
import { type FailureType, FailureType as FT, type HostDiagnostics, isFailureType } from './domain/failures.js';

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

/** Maps whatever ended a step to the failure type an operator reads in history and search attributes. */
export function classify(err: unknown, origin: Origin = originOf(err)): Classified {
  if (isCancellation(err)) {
    return { type: FT.CancelledByOperator, message: 'lifecycle cancelled by an operator', details: {} };
  }
  const cause = err instanceof ActivityFailure ? err.cause : err;
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
