/**
 * Early stop for a benchmark batch: true once even the best case cannot reach `minRate`.
 *  - GPU ceiling: proofs share each GPU one at a time, so `gpus` GPUs never prove faster than
 *    gpus / (fastest GPU-compute time). Queueing does not inflate GPU time, so one proof judges it,
 *    when the ceiling is clearly (10 %) short; a second confirms a narrower miss.
 *  - Pace: proofs in flight finishing at once, every proof not yet started at the fastest total time
 *    seen, `concurrency` at a time. Judged only after `minProofs` completions, because the first
 *    round's totals include queueing behind its own siblings.
 */
export function cannotReachMinRate(p: {
  completed: number;
  requested: number;
  elapsedMs: number;
  fastestProofMs: number;
  /** Fastest GPU-compute time of a completed proof (the daemon's gpu_compute_ms); 0 when unknown. */
  fastestGpuMs?: number;
  gpus?: number;
  concurrency: number;
  minRate: number;
  minProofs: number;
}): boolean {
  if (p.completed >= p.requested || p.minRate <= 0 || p.completed < 1) return false;
  const ceiling = gpuCeilingRate(p.fastestGpuMs ?? 0, p.gpus ?? 0);
  if (ceiling !== null && (ceiling < p.minRate * 0.9 || (p.completed >= 2 && ceiling < p.minRate))) return true;
  if (p.completed < p.minProofs) return false;
  const remaining = p.requested - p.completed;
  // Proofs already in flight might finish at once: only those not yet started must take a full proof.
  const notStarted = Math.max(0, remaining - Math.max(1, p.concurrency));
  const bestRemainingMs = Math.ceil(notStarted / Math.max(1, p.concurrency)) * p.fastestProofMs;
  const bestRate = p.requested / ((p.elapsedMs + bestRemainingMs) / 3_600_000);
  return bestRate < p.minRate;
}

/** Proofs per hour the GPUs could sustain if they never idled; null when GPU time is unknown. */
export function gpuCeilingRate(fastestGpuMs: number, gpus: number): number | null {
  return fastestGpuMs > 0 && gpus > 0 ? (gpus * 3_600_000) / fastestGpuMs : null;
}
