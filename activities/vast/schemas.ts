import { z } from 'zod';

/** The offer fields this project reads (RAM in MB, prices in $/h); other fields pass through untouched. */
export const OfferSchema = z.looseObject({
  id: z.number().int().positive(),
  machine_id: z.number().int().nonnegative(),
  host_id: z.number().int().nonnegative(),
  gpu_name: z.string().min(1),
  num_gpus: z.number().int().positive(),
  gpu_ram: z.number().nonnegative(),
  cpu_ram: z.number().nonnegative(),
  cpu_cores: z.number().nullable().optional(),
  cpu_cores_effective: z.number().nullable().optional(),
  /** $/h with storage for the search's `allocated_storage` GiB included. */
  dph_total: z.number().nonnegative(),
  /** $/h for compute (GPU, CPU, RAM) alone. */
  dph_base: z.number().nonnegative().nullable().optional(),
  /** $/GB/month for the disk rented. */
  storage_cost: z.number().nonnegative().nullable().optional(),
  reliability2: z.number().min(0).max(1).optional(),
  cuda_max_good: z.number().optional(),
  rentable: z.boolean().optional(),
  verification: z.string().optional(),
});
export type Offer = z.infer<typeof OfferSchema>;

export const OfferSearchResponseSchema = z.looseObject({ offers: z.array(OfferSchema) });

export const CreateResponseSchema = z.looseObject({
  success: z.boolean(),
  new_contract: z.number().int().positive().optional(),
  error: z.string().optional(),
  msg: z.string().optional(),
});

export const InstanceSchema = z.looseObject({
  id: z.number().int().positive(),
  machine_id: z.number().int().nonnegative().optional(),
  host_id: z.number().int().nonnegative().optional(),
  actual_status: z.string().nullable().optional(),
  intended_status: z.string().nullable().optional(),
  cur_state: z.string().nullable().optional(),
  next_state: z.string().nullable().optional(),
  status_msg: z.string().nullable().optional(),
  label: z.string().nullable().optional(),
  gpu_name: z.string().optional(),
  num_gpus: z.number().int().optional(),
  cpu_ram: z.number().optional(),
  /** $/h Vast bills this instance, storage for its disk included. */
  dph_total: z.number().nullable().optional(),
  dph_base: z.number().nullable().optional(),
  storage_cost: z.number().nullable().optional(),
  disk_space: z.number().nullable().optional(),
  start_date: z.number().nullable().optional(),
});
export type Instance = z.infer<typeof InstanceSchema>;

/** GET /api/v0/instances/{id}/ answers a single object, or null once the instance is gone. */
export const ShowInstanceResponseSchema = z.looseObject({ instances: InstanceSchema.nullable() });

export const ListInstancesResponseSchema = z.looseObject({
  instances: z.array(InstanceSchema),
  next_token: z.string().nullable().optional(),
});

export const ErrorBodySchema = z.looseObject({
  success: z.boolean().optional(),
  error: z.string().optional(),
  msg: z.string().optional(),
  message: z.string().optional(),
  detail: z.string().optional(),
  new_contract: z.number().int().positive().optional(),
});

/** Filter operators of the Vast offer query format (`{"field": {"op": value}}`). */
export const QueryOpSchema = z.enum(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'notin']);
export type QueryOp = z.infer<typeof QueryOpSchema>;
export type OfferQuery = Record<string, unknown>;
