import type { EarlyStopEvidence } from '../types.js';

export interface BatchSoFar {
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
}

/**
 * Early stop for a benchmark batch: the evidence once even the best case cannot reach `minRate`, else null.
 *  - GPU ceiling: proofs share each GPU one at a time, so `gpus` GPUs never prove faster than
 *    gpus / (fastest GPU-compute time). Queueing does not inflate GPU time, so one proof judges it,
 *    when the ceiling is clearly (10 %) short; a second confirms a narrower miss.
 *  - Pace: proofs in flight finishing at once, every proof not yet started at the fastest total time
 *    seen, `concurrency` at a time. Judged only after `minProofs` completions, because the first
 *    round's totals include queueing behind its own siblings.
 */
export function earlyStopEvidence(p: BatchSoFar): EarlyStopEvidence | null {
  if (p.completed >= p.requested || p.minRate <= 0 || p.completed < 1) return null;
  const ceiling = gpuCeilingRate(p.fastestGpuMs ?? 0, p.gpus ?? 0);
  const { completed, requested } = p;
  const gpus = p.gpus ?? 0;
  if (ceiling !== null && (ceiling < p.minRate * 0.9 || (completed >= 2 && ceiling < p.minRate))) {
    return { bound: 'gpu-ceiling', bestRate: ceiling, gpuCeilingRate: ceiling, gpus, completed, requested };
  }
  if (completed < p.minProofs) return null;
  const remaining = requested - completed;
  // Proofs already in flight might finish at once: only those not yet started must take a full proof.
  const notStarted = Math.max(0, remaining - Math.max(1, p.concurrency));
  const bestRemainingMs = Math.ceil(notStarted / Math.max(1, p.concurrency)) * p.fastestProofMs;
  const bestRate = requested / ((p.elapsedMs + bestRemainingMs) / 3_600_000);
  if (bestRate >= p.minRate) return null;
  return { bound: 'best-pace', bestRate, gpuCeilingRate: ceiling, gpus, completed, requested };
}

/** True once even the best case cannot reach `minRate` (see earlyStopEvidence). */
export function cannotReachMinRate(p: BatchSoFar): boolean {
  return earlyStopEvidence(p) !== null;
}

/** Proofs per hour the GPUs could sustain if they never idled; null when GPU time is unknown. */
export function gpuCeilingRate(fastestGpuMs: number, gpus: number): number | null {
  return fastestGpuMs > 0 && gpus > 0 ? (gpus * 3_600_000) / fastestGpuMs : null;
}
