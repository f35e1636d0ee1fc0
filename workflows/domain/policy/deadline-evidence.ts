import { type Clock, realDuration } from './clock.js';

/**
 * A host step's deadline is evidence only if we were listening when it passed (docs/operating.md, "What
 * the product survives"). The workflow sees two facts: how late its timer fired (workflow time against
 * the timer's due time: a server or control worker that was down fires it when it returns) and whether
 * the host's step had gone unheard (the server timed it out and the workflow is collecting it by its
 * step id). All times are workflow time, on the lifecycle's clock, as the timeouts are; `why` says them
 * in real time.
 */
export interface DeadlineFacts {
  dueAtMs: number;
  firedAtMs: number;
  /** Since when the host's step has gone unheard; null while its heartbeats reach us. */
  unheardSinceMs: number | null;
  /** The host steps' heartbeat timeout: a timer later than this was not fired by a server that was up. */
  heartbeatSec: number;
  /** The deadline's own length: the extension never gives the host more than a second window. */
  deadlineSec: number;
  clock: Clock;
}

export interface UnheardDeadline {
  /** How late the timer fired (s). */
  lateSec: number;
  /** How long the host's step had gone unheard when the timer fired (s); null when it had not. */
  unheardSec: number | null;
  /** How long the workflow goes on listening for the host's kept batch before judging (s). */
  extendSec: number;
  why: string;
}

const sec = (ms: number) => Math.round(ms / 100) / 10;

/** Null when we were listening at the deadline (on time, the host heard); else what we missed and the extension. */
export function unheardDeadline(f: DeadlineFacts): UnheardDeadline | null {
  const hbMs = f.heartbeatSec * 1000;
  const lateMs = Math.max(0, f.firedAtMs - f.dueAtMs);
  const unheardMs = f.unheardSinceMs === null ? null : Math.max(0, f.firedAtMs - f.unheardSinceMs);
  if (lateMs <= hbMs && unheardMs === null) return null;
  // The host gets back the time we were not listening, and at least the time it takes the server to time
  // out a lost attempt and the workflow to call the same step id again (up to three times): four
  // heartbeat timeouts. Never more than a second deadline.
  const missedMs = lateMs + (unheardMs ?? 0);
  const extendMs = Math.min(f.deadlineSec * 1000, Math.max(missedMs, 4 * hbMs));
  const parts = [
    ...(lateMs > hbMs
      ? [`the deadline timer fired ${realDuration(lateMs / 1000, f.clock)} late (server or control worker unreachable)`]
      : []),
    ...(unheardMs !== null
      ? [`the host's batch had gone unheard at the server for ${realDuration(unheardMs / 1000, f.clock)}`]
      : []),
  ];
  return {
    lateSec: sec(lateMs),
    unheardSec: unheardMs === null ? null : sec(unheardMs),
    extendSec: sec(extendMs),
    why: parts.join('; '),
  };
}
