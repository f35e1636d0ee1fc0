import type { ConcurrencyRule } from '../types.js';

export interface BenchmarkPlan {
  concurrency: number;
  partitionWorkers: number;
  warmupPartitionWorkers: number;
}

function clamp(value: number, min: number, max: number): number {
  return Math.max(min, Math.min(max, value));
}

/**
 * Benchmark concurrency and daemon partition workers from the host's GPUs and RAM.
 * Matches the operating history: 2x RTX 3090 / 251 GB -> 2 proofs, 10 workers; 1x RTX PRO 4000 / 504 GB -> 3, 16;
 * 2x A40 / 2 TB -> 6, 16. Synthesis is RAM-bound, so RAM caps both numbers.
 */
export function planBenchmark(numGpus: number, ramMb: number, rule: ConcurrencyRule): BenchmarkPlan {
  const ramGiB = ramMb / 1024;
  const byRam = Math.floor(ramGiB / rule.ramGiBPerProof);
  const byGpu = Math.max(1, numGpus) * rule.proofsPerGpu;
  const concurrency = clamp(Math.min(byRam, byGpu), rule.minConcurrency, rule.maxConcurrency);
  const partitionWorkers = clamp(
    Math.floor(ramGiB / rule.ramGiBPerPartitionWorker),
    rule.warmupPartitionWorkers,
    rule.maxPartitionWorkers,
  );
  return { concurrency, partitionWorkers, warmupPartitionWorkers: rule.warmupPartitionWorkers };
}
