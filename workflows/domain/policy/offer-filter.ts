/** GPU models the fleet searches for unless the operator names others (`--gpu`). */
export const DEFAULT_GPUS = ['RTX 4090', 'RTX 3090', 'A40', 'RTX 5070 Ti', 'RTX PRO 4000'];

/** What the scaler and `gpu-fleet offers` search Vast for; RAM in MB, prices in $/h per offer. */
export interface OfferFilter {
  gpuModels: string[];
  minRamMb: number;
  minReliability: number;
  minCuda: number;
  maxOfferDph: number;
  /**
   * Vast's own default filters (vast-cli seeds verified=true, external=false, rentable=true). Omitted
   * means that default; null drops the filter (vast-cli's `any`).
   */
  verified?: boolean | null;
  external?: boolean | null;
  rentable?: boolean | null;
}

export const DEFAULT_SEARCH_FLAGS = { verified: true, external: false, rentable: true } as const;

/**
 * The one default search, the production scaler's: at least 128 GB host RAM (proof synthesis is
 * RAM-bound), Vast reliability 0.95, CUDA 12, at most $2/h per offer. Both
 * `gpu-fleet schedule setup` and `gpu-fleet offers` use it, so what `offers` lists is what the scaler
 * may rent; the demo and the bench override fields explicitly, each saying why.
 */
export const DEFAULT_OFFER_FILTER: Readonly<OfferFilter> = {
  gpuModels: DEFAULT_GPUS,
  minRamMb: 128_000,
  minReliability: 0.95,
  minCuda: 12,
  maxOfferDph: 2,
};

/**
 * Vast's offer query for the filter (RAM in MB). `allocated_storage` is the disk each lifecycle rents
 * (GiB): Vast prices `dph_total` for it, so the price filter, the ranking and the budget all see the
 * price Vast will bill, storage included, not its 8 GiB default.
 */
export function offerQuery(
  f: OfferFilter,
  diskGb: number,
  type: 'on-demand' | 'bid' = 'on-demand',
): Record<string, unknown> {
  return {
    gpu_name: { in: f.gpuModels },
    cpu_ram: { gte: f.minRamMb },
    reliability2: { gte: f.minReliability },
    cuda_max_good: { gte: f.minCuda },
    dph_total: { lte: f.maxOfferDph },
    ...searchFlags(f),
    order: [['dph_total', 'asc']],
    type,
    limit: 64,
    allocated_storage: diskGb,
  };
}

function searchFlags(f: OfferFilter): Record<string, { eq: boolean }> {
  const out: Record<string, { eq: boolean }> = {};
  for (const key of ['verified', 'external', 'rentable'] as const) {
    const v = f[key] === undefined ? DEFAULT_SEARCH_FLAGS[key] : f[key];
    if (v !== null) out[key] = { eq: v };
  }
  return out;
}
