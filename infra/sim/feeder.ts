import { CuzkClient } from '../../activities/gpu-host/cuzk-client.js';
import { loadC1 } from '../../activities/gpu-host/c1-input.js';

export interface FeederOptions {
  cuzkAddress: string;
  c1Path: string;
  concurrency: number;
  minerId: number;
  /** Prefix of request ids, unique per feeder. */
  tag: string;
  log(line: string): void;
  signal: AbortSignal;
}

/**
 * Simulated production prover (Curio's role after promotion): keeps the daemon busy with PoRep proofs
 * over the same gRPC API, `concurrency` at a time, so watch samples see real work.
 */
export async function runFeeder(o: FeederOptions): Promise<void> {
  const client = new CuzkClient(o.cuzkAddress);
  const c1 = await loadC1(o.c1Path);
  let n = 0;
  async function lane(): Promise<void> {
    while (!o.signal.aborted) {
      const id = `${o.tag}/${n++}`;
      try {
        const r = await client.prove(
          {
            requestId: id,
            vanillaProof: c1.bytes,
            sectorNumber: c1.sectorNumber,
            sectorSize: c1.sectorSize,
            minerId: o.minerId,
            registeredProof: 8,
          },
          3_600_000,
        );
        o.log(`${id} ${r.status} ${r.total_ms} ms`);
      } catch (err) {
        o.log(`${id} failed: ${err instanceof Error ? err.message : String(err)}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: o.concurrency }, lane));
  } finally {
    client.close();
  }
}
