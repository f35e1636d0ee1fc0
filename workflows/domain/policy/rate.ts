export interface RateVerdict {
  keep: boolean;
  rate: number;
}

/** Proofs per hour over the batch's wall time. */
export function proofsPerHour(completed: number, elapsedMs: number): number {
  if (completed <= 0 || elapsedMs <= 0) return 0;
  return Math.round((completed / (elapsedMs / 3_600_000)) * 100) / 100;
}

export function judgeRate(rate: number, minRate: number): RateVerdict {
  return { keep: rate >= minRate, rate };
}

/** Time the whole batch should need at exactly minRate; reported with a benchmark timeout. */
export function expectedBatchMs(proofs: number, minRate: number): number {
  return minRate > 0 ? Math.round((proofs / minRate) * 3_600_000) : 0;
}
