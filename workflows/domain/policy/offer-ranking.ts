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
