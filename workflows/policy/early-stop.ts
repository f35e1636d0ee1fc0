/**
 * Early stop for a benchmark batch: true once even the best case cannot reach `minRate` — every
 * remaining proof finishing at the fastest per-proof pace seen so far, `concurrency` at a time.
 * Judged only after `minProofs` completions, so one slow first proof does not kill a host.
 */
export function cannotReachMinRate(p: {
  completed: number;
  requested: number;
  elapsedMs: number;
  fastestProofMs: number;
  concurrency: number;
  minRate: number;
  minProofs: number;
}): boolean {
  if (p.completed < p.minProofs || p.completed >= p.requested || p.minRate <= 0) return false;
  const remaining = p.requested - p.completed;
  const bestRemainingMs = Math.ceil(remaining / Math.max(1, p.concurrency)) * p.fastestProofMs;
  const bestRate = p.requested / ((p.elapsedMs + bestRemainingMs) / 3_600_000);
  return bestRate < p.minRate;
}
