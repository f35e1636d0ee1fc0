import { CuzkClient } from '../../activities/gpu-host/cuzk-client.js';
import { loadC1 } from '../../activities/gpu-host/c1-input.js';

/**
 * Simulated production prover (Curio's role after promotion): keeps the local daemon busy with PoRep
 * proofs over the same gRPC API, `PROOF_CONCURRENCY` at a time, so watch samples see real work.
 */
const client = new CuzkClient(process.env.CUZK_ADDRESS ?? '127.0.0.1:9820');
const c1 = await loadC1(process.env.C1_PATH ?? 'c1.json');
const concurrency = Number(process.env.PROOF_CONCURRENCY ?? '2');
let n = 0;
async function lane(): Promise<never> {
  for (;;) {
    const id = `curio-sim/${process.pid}/${n++}`;
    try {
      const r = await client.prove(
        {
          requestId: id,
          vanillaProof: c1.bytes,
          sectorNumber: c1.sectorNumber,
          sectorSize: c1.sectorSize,
          minerId: Number(process.env.MINER_ID ?? 1000),
          registeredProof: 8,
        },
        3_600_000,
      );
      console.log(`${id} ${r.status} ${r.total_ms} ms`);
    } catch (err) {
      console.error(`${id} failed: ${err instanceof Error ? err.message : String(err)}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
await Promise.all(Array.from({ length: concurrency }, lane));
