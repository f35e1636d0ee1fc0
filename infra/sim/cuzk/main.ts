import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { z } from 'zod';
import { loadProvingEngine, MAX_MESSAGE_BYTES } from '../../../activities/gpu-host/cuzk-proto.js';
import { HostScenarioSchema, scaledMs, timeScale } from '../scenario.js';
import { ProvingEngine } from './engine.js';
import { readDaemonConfig } from './toml-config.js';

/**
 * Simulated cuzk-daemon: the real proto over real gRPC, started by the GPU-host worker exactly as it
 * starts the real daemon (`<cmd> --config <file>`). Behaviour comes from SIM_HOST_SCENARIO (JSON).
 * A TCP proxy in front of the gRPC server lets a fault drop client connections mid-proof.
 */
const configIdx = process.argv.indexOf('--config');
const configFile = configIdx > 0 ? process.argv[configIdx + 1] : undefined;
if (!configFile) {
  console.error('usage: cuzk-sim --config <daemon.toml>');
  process.exit(2);
}
const cfg = readDaemonConfig(configFile);
const scenario = HostScenarioSchema.parse(JSON.parse(process.env.SIM_HOST_SCENARIO ?? '{}'));
const gpuName = process.env.SIM_GPU_NAME ?? 'RTX 4090';
const numGpus = Number(process.env.SIM_NUM_GPUS ?? '1');
const scale = timeScale();

// The real daemon colours its log even when redirected; the worker must strip this.
const log = (line: string) => process.stdout.write(`\x1b[2m${new Date().toISOString()}\x1b[0m ${line}\n`);

const sockets = new Set<net.Socket>();
const engine = new ProvingEngine(scenario, scale, cfg.partitionWorkers, cfg.paramCache, numGpus, {
  log,
  dropConnections: () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
  },
  die: (kind) => {
    if (kind === 'oom') process.kill(process.pid, 'SIGKILL');
    process.exit(101);
  },
});

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

type Call = grpc.ServerUnaryCall<Record<string, unknown>, unknown>;
type Cb = grpc.sendUnaryData<unknown>;

const handlers = {
  async Prove(call: Call, cb: Cb) {
    const submit = call.request.submit as Record<string, unknown> | undefined;
    const jobId = String(submit?.request_id ?? '');
    const r = await engine.prove(jobId, checkC1(submit));
    cb(null, {
      result: {
        job_id: jobId,
        status: r.status,
        proof: r.status === 'COMPLETED' ? Buffer.alloc(192, 7) : Buffer.alloc(0),
        error_message: r.errorMessage,
        queue_wait_ms: String(Math.max(0, r.queueWaitMs)),
        srs_load_ms: '0',
        synthesis_ms: String(r.synthesisMs),
        gpu_compute_ms: String(r.gpuComputeMs),
        total_ms: String(r.totalMs),
      },
    });
  },
  GetStatus(_call: Call, cb: Cb) {
    const c = engine.counters;
    cb(null, {
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
    });
  },
  GetMetrics(_call: Call, cb: Cb) {
    const c = engine.counters;
    cb(null, { prometheus_text: `cuzk_proofs_completed_total ${c.completed}\ncuzk_proofs_failed_total ${c.failed}\n` });
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
  SubmitProof(call: Call, cb: Cb) {
    cb({ code: grpc.status.UNIMPLEMENTED, details: 'simulator: use Prove' });
  },
  AwaitProof(_call: Call, cb: Cb) {
    cb({ code: grpc.status.UNIMPLEMENTED, details: 'simulator: use Prove' });
  },
};

const server = new grpc.Server({
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
});
server.addService(loadProvingEngine().service, handlers as unknown as grpc.UntypedServiceImplementation);

log(`INFO cuzk_daemon: starting, partition_workers=${cfg.partitionWorkers} gpus=${numGpus}x ${gpuName}`);
server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, innerPort) => {
  if (err) {
    log(`ERROR cuzk_daemon: bind failed: ${err.message}`);
    process.exit(1);
  }
  if (scenario.faults.neverReady) {
    log('INFO cuzk_daemon: loading SRS porep-32g …');
    return; // hangs in SRS load forever, never serves
  }
  setTimeout(
    () => {
      const [host, port] = splitHostPort(cfg.listen);
      const proxy = net.createServer((client) => {
        const upstream = net.connect(innerPort, '127.0.0.1');
        sockets.add(client);
        client.on('close', () => sockets.delete(client));
        client.pipe(upstream).pipe(client);
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
        client.on('close', () => upstream.destroy());
      });
      proxy.listen(port, host, () => log(`INFO cuzk_daemon: ready, serving on ${cfg.listen}`));
    },
    scaledMs(scenario.startupSec, scale),
  );
});

function splitHostPort(addr: string): [string, number] {
  const clean = addr.replace(/^https?:\/\//, '');
  const i = clean.lastIndexOf(':');
  return [clean.slice(0, i), Number(clean.slice(i + 1))];
}

process.on('SIGTERM', () => {
  log('INFO cuzk_daemon: SIGTERM, shutting down');
  process.exit(0);
});
