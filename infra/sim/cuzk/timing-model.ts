/**
 * The simulator's proving-time model, shared by the engine (which sleeps these times) and by tests and
 * benches that need a batch's timings without running it: synthesis on the CPU (slower under ~10
 * partition workers), then GPU compute serialized per GPU, first come first served.
 */
export function proofPhasesSec(
  proofSec: number,
  partitionWorkers: number,
  slowdown = 1,
): { synthSec: number; gpuSec: number } {
  return {
    synthSec: proofSec * slowdown * 0.55 * Math.max(1, Math.sqrt(10 / partitionWorkers)),
    gpuSec: proofSec * slowdown * 0.45,
  };
}

export interface SimulatedProof {
  index: number;
  startSec: number;
  endSec: number;
  totalSec: number;
  gpuSec: number;
}

/**
 * A benchmark batch as the engine runs it: `concurrency` callers each start their next proof the moment
 * the last one returns; returns the proofs in completion order (times from the batch's start).
 */
export function simulateBatch(b: {
  proofSec: number;
  gpus: number;
  partitionWorkers: number;
  concurrency: number;
  count: number;
}): SimulatedProof[] {
  const { synthSec, gpuSec } = proofPhasesSec(b.proofSec, b.partitionWorkers);
  const workerFree = Array.from({ length: Math.max(1, b.concurrency) }, () => 0);
  const gpuFree = Array.from({ length: Math.max(1, b.gpus) }, () => 0);
  const done: SimulatedProof[] = [];
  for (let index = 0; index < b.count; index++) {
    // The caller free soonest starts the next proof; equal synthesis times keep GPU arrivals in start order.
    const w = argMin(workerFree);
    const startSec = workerFree[w]!;
    const arrival = startSec + synthSec;
    const g = argMin(gpuFree);
    const endSec = Math.max(arrival, gpuFree[g]!) + gpuSec;
    gpuFree[g] = endSec;
    workerFree[w] = endSec;
    done.push({ index, startSec, endSec, totalSec: endSec - startSec, gpuSec });
  }
  return done.sort((a, b) => a.endSec - b.endSec || a.index - b.index);
}

function argMin(xs: number[]): number {
  let best = 0;
  for (let i = 1; i < xs.length; i++) if (xs[i]! < xs[best]!) best = i;
  return best;
}
