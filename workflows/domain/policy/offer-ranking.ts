/** An offer as the scaler sees it (Vast units: RAM in MB, price in $/h). */
export interface OfferCandidate {
  offerId: number;
  machineId: number;
  gpuName: string;
  numGpus: number;
  cpuRamMb: number;
  /** $/h for the disk the lifecycle rents (the search sent it as allocated_storage): what Vast will bill. */
  dphTotal: number;
  /** $/h as the search quoted it, kept for the operator beside the recomputed price. */
  searchedDph?: number;
}

/** What past benchmarks taught: proofs/h per machine, and per GPU of each model. */
export interface PerfHistory {
  byMachine: Record<string, number>;
  perGpuByModel: Record<string, number>;
}

export interface RankedOffer extends OfferCandidate {
  /** Predicted proofs/h; null for a machine and GPU model never benchmarked. */
  predictedRate: number | null;
  /** Predicted proofs/h per $/h; exploration offers rank by price instead. */
  score: number;
  source: 'machine' | 'gpu-model' | 'explore';
}

/**
 * The offers preview's ranking (fleet-admin.ts `offerReport`, `gpu-fleet offers`): predicted proofs/hour per
 * dollar, the model's per-GPU rate times the GPU count. The scaler ranks by value instead (value-ranking.ts).
 * A machine's own history wins over its GPU model's;
 * offers predicted under minRate and bad machines are dropped; never-seen GPU models are kept apart as
 * exploration candidates, cheapest first, so the caller can spend a bounded budget learning about them.
 */
export function rankOffers(
  offers: OfferCandidate[],
  perf: PerfHistory,
  badMachines: readonly number[],
  minRate: number,
): { known: RankedOffer[]; explore: RankedOffer[] } {
  const bad = new Set(badMachines);
  const known: RankedOffer[] = [];
  const explore: RankedOffer[] = [];
  const seenMachines = new Set<number>();
  for (const o of offers) {
    // One physical machine at a time: its offers are slices of the same hardware.
    if (bad.has(o.machineId) || seenMachines.has(o.machineId) || o.dphTotal <= 0) continue;
    seenMachines.add(o.machineId);
    const machineRate = perf.byMachine[String(o.machineId)];
    const modelRate = perf.perGpuByModel[o.gpuName];
    if (machineRate !== undefined) {
      if (machineRate >= minRate)
        known.push({ ...o, predictedRate: machineRate, score: machineRate / o.dphTotal, source: 'machine' });
    } else if (modelRate !== undefined) {
      const predicted = modelRate * o.numGpus;
      if (predicted >= minRate)
        known.push({ ...o, predictedRate: predicted, score: predicted / o.dphTotal, source: 'gpu-model' });
    } else {
      explore.push({ ...o, predictedRate: null, score: 1 / o.dphTotal, source: 'explore' });
    }
  }
  const byScore = (a: RankedOffer, b: RankedOffer) => b.score - a.score || a.offerId - b.offerId;
  return { known: known.sort(byScore), explore: explore.sort(byScore) };
}

export interface FleetTarget {
  targetRate: number;
  maxDph: number;
  maxInstances: number;
  maxConcurrentBenchmarks: number;
  /** How many never-benchmarked GPU models one scaler run may try. */
  explorationSlots: number;
  /** $/h one scaler run may spend on exploration offers in all (unset: bounded by the slots alone). */
  explorationDph?: number;
  minRate: number;
}

export interface FleetNow {
  /** `interruptible` marks a bid rental (absent: on-demand); the mixed policy counts the two apart. */
  promoted: Array<{ rate: number; dph: number; interruptible?: boolean }>;
  inFlight: Array<{ dph: number; predictedRate: number | null; interruptible?: boolean }>;
}
