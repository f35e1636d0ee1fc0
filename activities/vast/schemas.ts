import { z } from 'zod';

/**
 * The offer fields this project needs to rent and rank (RAM in MB, prices in $/h); other fields pass
 * through untouched. Vast's own SDK types many offer fields as nullable, so the optional ones we only
 * use for ranking accept null; a row that lacks a required one is dropped and reported, not fatal.
 */
export const OfferSchema = z.looseObject({
  id: z.number().int().positive(),
  machine_id: z.number().int().nonnegative(),
  host_id: z.number().int().nonnegative(),
  gpu_name: z.string().min(1),
  num_gpus: z.number().int().positive(),
  gpu_ram: z.number().nonnegative(),
  cpu_ram: z.number().nonnegative(),
  cpu_cores: z.number().nullish(),
  cpu_cores_effective: z.number().nullish(),
  /** $/h with storage for the search's `allocated_storage` GiB included. */
  dph_total: z.number().nonnegative(),
  /** $/h for compute (GPU, CPU, RAM) alone. */
  dph_base: z.number().nonnegative().nullish(),
  /** $/GB/month for the disk rented. */
  storage_cost: z.number().nonnegative().nullish(),
  reliability2: z.number().min(0).max(1).nullish(),
  cuda_max_good: z.number().nullish(),
  rentable: z.boolean().nullish(),
  verification: z.string().nullish(),
  /** $/h, the lowest interruptible bid Vast takes now (vast-api.md §1.7); it moves with the market. */
  min_bid: z.number().nonnegative().nullish(),
  is_bid: z.boolean().nullish(),
});
export type Offer = z.infer<typeof OfferSchema>;

/** The page itself; each row is checked on its own (see VastClient.searchOffersReport). */
export const OfferSearchResponseSchema = z.looseObject({ offers: z.array(z.unknown()) });

export const CreateResponseSchema = z.looseObject({
  success: z.boolean(),
  new_contract: z.number().int().positive().optional(),
  error: z.string().optional(),
  msg: z.string().optional(),
});

/**
 * An instance as shown or listed. Vast's SDK types nearly every field but `id` as nullable: every field
 * here may be null or absent, and the product reads them with that in mind.
 */
export const InstanceSchema = z.looseObject({
  id: z.number().int().positive(),
  machine_id: z.number().int().nonnegative().nullish(),
  host_id: z.number().int().nonnegative().nullish(),
  actual_status: z.string().nullish(),
  intended_status: z.string().nullish(),
  cur_state: z.string().nullish(),
  next_state: z.string().nullish(),
  status_msg: z.string().nullish(),
  label: z.string().nullish(),
  gpu_name: z.string().nullish(),
  num_gpus: z.number().int().nullish(),
  cpu_ram: z.number().nullish(),
  cpu_cores: z.number().nullish(),
  cpu_cores_effective: z.number().nullish(),
  /** $/h Vast bills this instance, storage for its disk included. */
  dph_total: z.number().nullish(),
  dph_base: z.number().nullish(),
  storage_cost: z.number().nullish(),
  disk_space: z.number().nullish(),
  start_date: z.number().nullish(),
  /** $/h, the lowest bid that keeps an interruptible instance running now. */
  min_bid: z.number().nullish(),
  /** True for an interruptible (bid) instance. */
  is_bid: z.boolean().nullish(),
});
export type Instance = z.infer<typeof InstanceSchema>;

/** GET /api/v0/instances/{id}/ answers a single object, or null once the instance is gone. */
export const ShowInstanceResponseSchema = z.looseObject({ instances: InstanceSchema.nullable() });

export const ListInstancesResponseSchema = z.looseObject({
  instances: z.array(InstanceSchema),
  next_token: z.string().nullable().optional(),
});

/** PUT /api/v0/instances/bid_price/{id}/ answers `{"success": true}` (Vast's OpenAPI page for change bid). */
export const ChangeBidResponseSchema = z.looseObject({ success: z.boolean().optional(), msg: z.string().optional() });

export const ErrorBodySchema = z.looseObject({
  success: z.boolean().optional(),
  error: z.string().optional(),
  msg: z.string().optional(),
  message: z.string().optional(),
  detail: z.string().optional(),
  new_contract: z.number().int().positive().optional(),
});

/** An offer search in Vast's query format (`{"field": {"op": value}}`). */
export type OfferQuery = Record<string, unknown>;
