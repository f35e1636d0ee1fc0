import * as grpc from '@grpc/grpc-js';
import { z } from 'zod';
import { MAX_MESSAGE_BYTES } from '../../../activities/gpu-host/cuzk-proto.js';
import type { HostScenario } from '../scenario.js';
import type { ProofOutcome, ProvingEngine } from './engine.js';

type Call = grpc.ServerUnaryCall<Record<string, unknown>, unknown>;
type Cb = grpc.sendUnaryData<unknown>;

const C1Schema = z.object({ SectorNum: z.number(), Phase1Out: z.string(), SectorSize: z.number() });

function checkC1(submit: Record<string, unknown> | undefined): { ok: boolean; why: string } {
  try {
    const raw = submit?.vanilla_proof;
    const c1 = C1Schema.parse(JSON.parse(Buffer.isBuffer(raw) ? raw.toString('utf8') : ''));
    if (String(c1.SectorNum) !== String(submit?.sector_number)) {
      return {
        ok: false,
        why: `sector_number ${String(submit?.sector_number)} does not match C1 SectorNum ${c1.SectorNum}`,
      };
    }
    return { ok: true, why: '' };
  } catch (err) {
    return { ok: false, why: `invalid vanilla_proof: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** A result from another client's job with an impossible total: what a host with `badResponses: garbage` answers. */
const GARBAGE_RESULT = {
  job_id: 'job-of-another-client',
  status: 'COMPLETED',
  proof: Buffer.alloc(0),
  error_message: '',
  queue_wait_ms: '0',
  srs_load_ms: '0',
  synthesis_ms: '0',
  gpu_compute_ms: '0',
  total_ms: '18446744073709551615',
};

function proveResult(jobId: string, r: ProofOutcome, bad: HostScenario['faults']['badResponses']) {
  return {
    job_id: jobId,
    status: r.status,
    proof:
      r.status !== 'COMPLETED'
        ? Buffer.alloc(0)
        : // Past the 128 MiB both sides agree on: the client must refuse it, not buffer it.
          Buffer.alloc(bad === 'oversized' ? MAX_MESSAGE_BYTES + 1024 : 192, 7),
    error_message: r.errorMessage,
    queue_wait_ms: String(Math.max(0, r.queueWaitMs)),
    srs_load_ms: '0',
    synthesis_ms: String(r.synthesisMs),
    gpu_compute_ms: String(r.gpuComputeMs),
    total_ms: String(r.totalMs),
  };
}

async function prove(engine: ProvingEngine, scenario: HostScenario, log: (line: string) => void, call: Call, cb: Cb) {
  const submit = call.request.submit as Record<string, unknown> | undefined;
  const jobId = String(submit?.request_id ?? '');
  let r;
  try {
    r = await engine.prove(jobId, checkC1(submit));
  } catch (err) {
    // Only an in-process daemon gets here (its stand-in was ended by die()); the client sees the drop.
    return cb({ code: grpc.status.UNAVAILABLE, details: err instanceof Error ? err.message : String(err) });
  }
  const bad = scenario.faults.badResponses;
  if (bad === 'garbage') {
    log(`WARN cuzk_server: answering job ${jobId} with a corrupted result (simulated fault)`);
    return cb(null, { result: GARBAGE_RESULT });
  }
  cb(null, { result: proveResult(jobId, r, bad) });
}

function status(engine: ProvingEngine, gpuName: string, numGpus: number) {
  const c = engine.counters;
  return {
    gpus: Array.from({ length: numGpus * 2 }, (_, i) => ({
      ordinal: Math.floor(i / 2),
      name: gpuName,
      vram_total_bytes: String(24 * 2 ** 30),
      vram_free_bytes: String(4 * 2 ** 30),
      current_job_id: '',
      current_proof_kind: '',
    })),
    loaded_srs: [{ circuit_id: 'porep-32g', tier: 'HOT', size_bytes: String(47 * 2 ** 30), ref_count: 1 }],
    queues: [],
    total_proofs_completed: String(c.completed),
    total_proofs_failed: String(c.failed),
    uptime_seconds: String(c.uptimeSec),
    pinned_memory_bytes: '0',
    pinned_memory_limit_bytes: '0',
  };
}

/** The ProvingEngine gRPC service of one simulated daemon, answered from its engine. */
export function daemonHandlers(
  engine: ProvingEngine,
  scenario: HostScenario,
  gpuName: string,
  numGpus: number,
  log: (line: string) => void,
) {
  return {
    Prove: (call: Call, cb: Cb) => prove(engine, scenario, log, call, cb),
    GetStatus(_call: Call, cb: Cb) {
      cb(null, status(engine, gpuName, numGpus));
    },
    GetMetrics(_call: Call, cb: Cb) {
      const c = engine.counters;
      cb(null, {
        prometheus_text: `cuzk_proofs_completed_total ${c.completed}\ncuzk_proofs_failed_total ${c.failed}\n`,
      });
    },
    // Faithful to the real daemon: these two are no-ops.
    CancelProof(_call: Call, cb: Cb) {
      cb(null, { was_running: false });
    },
    EvictSRS(_call: Call, cb: Cb) {
      cb(null, { was_loaded: false, freed_bytes: '0' });
    },
    PreloadSRS(_call: Call, cb: Cb) {
      cb(null, { already_loaded: true, load_time_ms: '0' });
    },
    SubmitProof(_call: Call, cb: Cb) {
      cb({ code: grpc.status.UNIMPLEMENTED, details: 'simulator: use Prove' });
    },
    AwaitProof(_call: Call, cb: Cb) {
      cb({ code: grpc.status.UNIMPLEMENTED, details: 'simulator: use Prove' });
    },
  };
}
