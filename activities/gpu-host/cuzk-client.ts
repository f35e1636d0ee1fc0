import * as grpc from '@grpc/grpc-js';
import { z } from 'zod';
import { loadProvingEngine, MAX_MESSAGE_BYTES } from './cuzk-proto.js';

const u64 = z.union([z.string(), z.number()]).transform((v) => Number(v));

export const AwaitProofResponseSchema = z.object({
  job_id: z.string(),
  status: z.enum(['UNKNOWN', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT']),
  proof: z.instanceof(Buffer),
  error_message: z.string(),
  queue_wait_ms: u64,
  srs_load_ms: u64,
  synthesis_ms: u64,
  gpu_compute_ms: u64,
  total_ms: u64,
});
export type AwaitProofResponse = z.infer<typeof AwaitProofResponseSchema>;

const ProveResponseSchema = z.object({ result: AwaitProofResponseSchema });

export const GetStatusResponseSchema = z.object({
  gpus: z.array(z.object({ ordinal: z.number(), name: z.string(), vram_total_bytes: u64, current_job_id: z.string() })),
  total_proofs_completed: u64,
  total_proofs_failed: u64,
  uptime_seconds: u64,
});
export type DaemonStatus = z.infer<typeof GetStatusResponseSchema>;

export interface ProveParams {
  requestId: string;
  vanillaProof: Buffer;
  sectorNumber: number;
  minerId: number;
  sectorSize: number;
  registeredProof: number;
}

/** A gRPC call that failed at the transport or status level (not a proof that FAILED). */
export class CuzkCallError extends Error {
  constructor(
    readonly method: string,
    readonly code: grpc.status,
    readonly details: string,
  ) {
    super(`${method}: ${grpc.status[code] ?? code} ${details}`);
    this.name = 'CuzkCallError';
  }
}

/** The daemon answered, but not with the documented message shape. */
export class CuzkResponseError extends Error {
  constructor(method: string, issues: string) {
    super(`${method}: unexpected response: ${issues}`);
    this.name = 'CuzkResponseError';
  }
}

/** No proof takes a week; a larger figure is a corrupted counter, not a slow GPU. */
const MAX_PLAUSIBLE_PROOF_MS = 7 * 24 * 3_600_000;

/** What a well-formed answer to our Prove must also satisfy, beyond its shape. */
export function proveResultIssues(requestId: string, r: AwaitProofResponse): string[] {
  const issues: string[] = [];
  if (r.job_id !== requestId)
    issues.push(`result.job_id: ${JSON.stringify(r.job_id.slice(0, 100))} is not ours (${requestId})`);
  if (r.status === 'COMPLETED' && r.proof.length === 0) issues.push('result.proof: empty in a COMPLETED result');
  for (const k of ['queue_wait_ms', 'srs_load_ms', 'synthesis_ms', 'gpu_compute_ms', 'total_ms'] as const) {
    if (!(r[k] >= 0 && r[k] <= MAX_PLAUSIBLE_PROOF_MS)) issues.push(`result.${k}: ${r[k]} is not a plausible duration`);
  }
  return issues;
}

type Unary = (
  req: unknown,
  meta: grpc.Metadata,
  opts: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res: unknown) => void,
) => grpc.ClientUnaryCall;

/** Typed client for cuzk.v1.ProvingEngine; every call carries a deadline sized by its caller. */
export class CuzkClient {
  private readonly client: grpc.Client;

  constructor(address: string) {
    const Ctor = loadProvingEngine();
    this.client = new Ctor(address.replace(/^http:\/\//, ''), grpc.credentials.createInsecure(), {
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      // Each attempt gets a fresh connection after a restart instead of waiting on a backoff timer.
      'grpc.initial_reconnect_backoff_ms': 200,
      'grpc.max_reconnect_backoff_ms': 1000,
    });
  }

  async prove(
    p: ProveParams,
    deadlineMs: number,
    onCall?: (call: grpc.ClientUnaryCall) => void,
  ): Promise<AwaitProofResponse> {
    const req = {
      submit: {
        request_id: p.requestId,
        proof_kind: 'POREP_SEAL_COMMIT',
        sector_size: String(p.sectorSize),
        registered_proof: String(p.registeredProof),
        priority: 'NORMAL',
        vanilla_proof: p.vanillaProof,
        sector_number: String(p.sectorNumber),
        miner_id: String(p.minerId),
      },
    };
    const res = await this.unary('Prove', req, deadlineMs, ProveResponseSchema, onCall);
    const issues = proveResultIssues(p.requestId, res.result);
    if (issues.length) throw new CuzkResponseError('Prove', issues.join('; '));
    return res.result;
  }

  getStatus(deadlineMs: number): Promise<DaemonStatus> {
    return this.unary('GetStatus', {}, deadlineMs, GetStatusResponseSchema);
  }

  close(): void {
    this.client.close();
  }

  private unary<S extends z.ZodType>(
    method: string,
    req: unknown,
    deadlineMs: number,
    schema: S,
    onCall?: (call: grpc.ClientUnaryCall) => void,
  ): Promise<z.infer<S>> {
    const fn = (this.client as unknown as Record<string, Unary>)[method];
    if (!fn) throw new Error(`ProvingEngine has no method ${method}`);
    return new Promise((resolve, reject) => {
      const call = fn.call(this.client, req, new grpc.Metadata(), { deadline: Date.now() + deadlineMs }, (err, res) => {
        if (err) return reject(new CuzkCallError(method, err.code, err.details || err.message));
        const parsed = schema.safeParse(res);
        if (!parsed.success) {
          return reject(
            new CuzkResponseError(
              method,
              parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
            ),
          );
        }
        resolve(parsed.data);
      });
      onCall?.(call);
    });
  }
}
