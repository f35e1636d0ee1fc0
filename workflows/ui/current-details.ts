import type { BenchmarkProgress, Stage, StoreWait } from '../domain/types.js';
import { formatUsd } from '../domain/policy/cost.js';
import { fmtMinutes, fmtRate, md } from './text.js';

/** What the lifecycle knows that an operator wants at a glance; all times are workflow time (epoch ms). */
export interface DetailsState {
  stage: Stage;
  benchmark: BenchmarkProgress | null;
  stageDeadlineMs: number | null;
  /** The benchmark's rate, or the promoted watch's windowed rate once measured. */
  rate: number | null;
  /** The promoted watch's rate window; null while the rate is the benchmark's. */
  rateWindowMs: number | null;
  /** GPU-$ so far from the lifecycle's cost ledger (real units); null before the rent. */
  costUsd: number | null;
  waiting: StoreWait | null;
  vastUnreadableSince: string | null;
  /** Which rental of its offer (RentalNumber); a re-rent says so, the first (or unknown) says nothing. */
  rentalNumber?: number | null;
}

/**
 * The line the Temporal UI shows as the workflow's current details, e.g.
 * "benchmark 7/12 · 41 proofs/h so far · 23 min left · $0.42 so far" or
 * "promoted · 39 proofs/h over 30 min · $4.10 so far".
 */
export function currentDetails(s: DetailsState, nowMs: number): string {
  const parts: string[] = [];
  if (s.rentalNumber && s.rentalNumber > 1) parts.push(`rental ${s.rentalNumber} of this offer`);
  if (s.stage === 'benchmark' && s.benchmark) {
    const b = s.benchmark;
    // "7 of 12", not "1/4": the UI's markdown turns that into a fraction.
    parts.push(`benchmark ${b.completed} of ${b.requested} proofs`);
    if (b.completed > 0 && b.elapsedMs > 0) parts.push(`${fmtRate(b.completed / (b.elapsedMs / 3_600_000))} so far`);
  } else if (s.stage === 'promoted') {
    parts.push('promoted');
    if (s.rate !== null)
      parts.push(
        s.rateWindowMs === null
          ? `benchmark ${fmtRate(s.rate)}`
          : `${fmtRate(s.rate)} over ${fmtMinutes(s.rateWindowMs)}`,
      );
  } else {
    parts.push(s.stage.replace(/_/g, ' '));
  }
  if (s.stageDeadlineMs !== null) parts.push(`${fmtMinutes(s.stageDeadlineMs - nowMs)} left`);
  if (s.costUsd !== null) parts.push(`${formatUsd(s.costUsd)} so far`);
  let line = parts.join(' · ');
  if (s.vastUnreadableSince) line += ` · Vast unreadable since ${s.vastUnreadableSince}`;
  if (s.waiting) {
    const w = s.waiting;
    line = `waiting on the store… (${w.write}, ${w.attempts} rounds since ${w.since}: ${w.lastError})\n\n${line}`;
  }
  return md(line);
}
