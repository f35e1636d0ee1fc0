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

/** A batch's fastest proof and fastest GPU time from its per-proof timings (Infinity with none). */
export function fastestOf(timings: ReadonlyArray<{ totalMs: number; gpuComputeMs: number }>): {
  fastestProofMs: number;
  fastestGpuMs: number;
} {
  return {
    fastestProofMs: Math.min(...timings.map((t) => t.totalMs)),
    fastestGpuMs: Math.min(...timings.map((t) => t.gpuComputeMs)),
  };
}

/**
 * Early stop for a benchmark batch: the evidence once even the best case cannot reach `minRate`, else null.
 *  - GPU ceiling: proofs share each GPU one at a time, so `gpus` GPUs never prove faster than
 *    gpus / (fastest GPU-compute time). Queueing does not inflate GPU time, so one proof judges it,
 *    when the ceiling is clearly (10 %) short; a second confirms a narrower miss.
 *  - Pace: proofs in flight finishing at once, every proof not yet started at the fastest total time
 *    seen, `concurrency` at a time. Judged only after `minProofs` completions, because the first
 *    round's totals include queueing behind its own siblings. The batch's filling of its pipeline is
 *    refunded (`pipelineFillMs`): production pays it once, so it is no evidence the host is slow.
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
  const fillMs = pipelineFillMs(p.fastestProofMs, p.fastestGpuMs ?? 0);
  const steady = steadyRate(requested, p.elapsedMs + bestRemainingMs, fillMs);
  if (Math.min(steady, slotCeilingRate(p.fastestProofMs, p.concurrency) ?? Infinity) >= p.minRate) return null;
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

/**
 * How long a batch's GPUs waited, at its start, for its first synthesis: the pipeline's fill. A batch's
 * rate (completed / elapsed since its start) charges it, but a host in production fills its pipeline
 * once, not once per 12 proofs: a GPU-bound 2x RTX 3060 that proves 29.5/h measures 24.5/h over its
 * batch. The fastest proof's time less the fastest GPU time: the first proof's synthesis, never less.
 * None without a GPU time: the fill cannot be told from the proof then.
 */
export function pipelineFillMs(fastestProofMs: number, fastestGpuMs: number): number {
  if (!(fastestGpuMs > 0) || !Number.isFinite(fastestProofMs)) return 0;
  return Math.max(0, fastestProofMs - fastestGpuMs);
}

/** Proofs/h of `proofs` done in `spanMs` from the batch's start, its pipeline's fill refunded. */
export function steadyRate(proofs: number, spanMs: number, fillMs: number): number {
  const ms = spanMs - fillMs;
  return ms > 0 ? (proofs * 3_600_000) / ms : Infinity;
}

/**
 * Proofs/h that `concurrency` proofs in flight can finish at most: each slot holds its proof through
 * synthesis and the GPU, so it finishes one per fastest proof time however full the pipeline is. The
 * fill's refund holds only while the slots keep the GPUs busy; a host whose slots cannot is bound here.
 */
export function slotCeilingRate(fastestProofMs: number, concurrency: number): number | null {
  return fastestProofMs > 0 && Number.isFinite(fastestProofMs) && concurrency > 0
    ? (concurrency * 3_600_000) / fastestProofMs
    : null;
}

/**
 * The most proofs/h a host could sustain by its batch's evidence: the batch's rate with its pipeline's fill
 * refunded, never over its GPUs' ceiling (one proof per GPU at a time) nor its slots' (`slotCeilingRate`).
 * A host under minRate by its batch's rate but not by this shows no evidence that it is slow. Null when no
 * proof time is known.
 */
export function sustainableRate(p: {
  completed: number;
  elapsedMs: number;
  fastestProofMs: number;
  fastestGpuMs: number;
  gpus: number;
  concurrency: number;
}): number | null {
  if (p.completed < 1 || !(p.fastestProofMs > 0 && Number.isFinite(p.fastestProofMs))) return null;
  const steady = steadyRate(p.completed, p.elapsedMs, pipelineFillMs(p.fastestProofMs, p.fastestGpuMs));
  const gpuCeiling = gpuCeilingRate(p.fastestGpuMs, p.gpus) ?? Infinity;
  return Math.min(steady, gpuCeiling, slotCeilingRate(p.fastestProofMs, p.concurrency) ?? Infinity);
}
