import { type Confidence, studentT } from './student-t.js';

export interface PromoteSoFar {
  /** Total times (ms) of the proofs completed so far, in completion order. */
  totalsMs: readonly number[];
  requested: number;
  elapsedMs: number;
  concurrency: number;
  minRate: number;
  confidence: Confidence;
  /** Completions to wait for before judging; never fewer than one full round (`concurrency`). */
  minProofs: number;
  /** When the proofs still in flight started (ms since the batch's start); only for the projected rate. */
  inFlightStartedMs?: readonly number[];
}

/** Why a batch was promoted before it finished: what an operator reads in history. */
export interface EarlyPromoteEvidence {
  confidence: Confidence;
  completed: number;
  requested: number;
  elapsedMs: number;
  /** Upper prediction bound (ms) on one more proof's total time at `confidence`. */
  proofBoundMs: number;
  /** Proofs per hour of the whole batch if every remaining round took `proofBoundMs`: a lower bound. */
  rateLowerBound: number;
  /**
   * Proofs per hour the whole batch would have measured, every remaining proof at the geometric mean
   * time seen: the host's rate as recorded (the partial batch's own rate would understate it).
   */
  projectedRate: number;
  minRate: number;
}

/** Spread of ln(proof time) assumed at least, so identical timings (a quiet host) do not give a zero-width bound. */
export const MIN_LOG_SPREAD = 0.05;

/**
 * Early promote, the mirror of early stop: the evidence once even a pessimistic finish of the batch
 * reaches `minRate`, else null.
 *  - Each remaining proof is bounded by a one-sided Student-t prediction bound on ln(total time) at
 *    `confidence` (log-normal: proof times are positive and skewed), and never below the slowest seen.
 *  - Proofs in flight are charged as if they had just started, and the rest run `concurrency` at a
 *    time: the batch ends within ceil(remaining / concurrency) bounds from now.
 *  - Judged only after a full round: the first round's totals include queueing behind its siblings,
 *    so its slowest proof is a safe bound on a steady-state proof; earlier ones are not.
 */
export function earlyPromoteEvidence(p: PromoteSoFar): EarlyPromoteEvidence | null {
  const k = p.totalsMs.length;
  if (k >= p.requested || p.minRate <= 0 || k < Math.max(2, p.minProofs, p.concurrency)) return null;
  if (p.totalsMs.some((ms) => !(ms > 0))) return null;
  const logs = p.totalsMs.map((ms) => Math.log(ms));
  const mean = logs.reduce((s, x) => s + x, 0) / k;
  const sd = Math.sqrt(logs.reduce((s, x) => s + (x - mean) ** 2, 0) / (k - 1));
  const spread = Math.max(sd, MIN_LOG_SPREAD);
  const predicted = Math.exp(mean + studentT(p.confidence, k - 1) * spread * Math.sqrt(1 + 1 / k));
  const proofBoundMs = Math.max(predicted, ...p.totalsMs);
  const rounds = Math.ceil((p.requested - k) / Math.max(1, p.concurrency));
  const rateLowerBound = p.requested / ((p.elapsedMs + rounds * proofBoundMs) / 3_600_000);
  if (rateLowerBound < p.minRate) return null;
  const projectedMs = projectedFinishMs(p, Math.exp(mean));
  return {
    confidence: p.confidence,
    completed: k,
    requested: p.requested,
    elapsedMs: p.elapsedMs,
    proofBoundMs: Math.round(proofBoundMs),
    rateLowerBound: Math.round(rateLowerBound * 100) / 100,
    projectedRate: Math.round((p.requested / (projectedMs / 3_600_000)) * 100) / 100,
    minRate: p.minRate,
  };
}

/** When the batch would end if each proof in flight and each not yet started took `typicalMs`. */
function projectedFinishMs(p: PromoteSoFar, typicalMs: number): number {
  const remaining = p.requested - p.totalsMs.length;
  const inFlight = (p.inFlightStartedMs ?? []).slice(0, remaining);
  // Each caller is free when its proof in flight ends; the others are free now.
  const free = inFlight.map((startedMs) => Math.max(p.elapsedMs, startedMs + typicalMs));
  while (free.length < Math.max(1, p.concurrency)) free.push(p.elapsedMs);
  let end = Math.max(p.elapsedMs, ...free.slice(0, inFlight.length));
  for (let n = remaining - inFlight.length; n > 0; n--) {
    let w = 0;
    for (let i = 1; i < free.length; i++) if (free[i]! < free[w]!) w = i;
    free[w] = free[w]! + typicalMs;
    end = Math.max(end, free[w]!);
  }
  return end;
}
