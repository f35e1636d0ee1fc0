/**
 * Early stop for a benchmark batch: true once even the best case cannot reach `minRate` — proofs in
 * flight finishing at once, every proof not yet started at the fastest pace seen, `concurrency` at a time.
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
  // Proofs already in flight might finish at once: only those not yet started must take a full proof.
  const notStarted = Math.max(0, remaining - Math.max(1, p.concurrency));
  const bestRemainingMs = Math.ceil(notStarted / Math.max(1, p.concurrency)) * p.fastestProofMs;
  const bestRate = p.requested / ((p.elapsedMs + bestRemainingMs) / 3_600_000);
  return bestRate < p.minRate;
}
