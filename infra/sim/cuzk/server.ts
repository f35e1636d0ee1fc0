import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { z } from 'zod';
import { loadProvingEngine, MAX_MESSAGE_BYTES } from '../../../activities/gpu-host/cuzk-proto.js';
import { type HostScenario, scaledMs } from '../scenario.js';
import { type EngineHooks, ProvingEngine } from './engine.js';
import type { DaemonFileConfig } from './toml-config.js';

export interface SimDaemonOptions {
  cfg: DaemonFileConfig;
  scenario: HostScenario;
  scale: number;
  gpuName: string;
  numGpus: number;
  log(line: string): void;
  /** Simulated kernel OOM kill or panic: the caller ends the daemon's process (or stand-in). */
  die: EngineHooks['die'];
}

export interface SimDaemon {
  /** Stops serving and drops every connection, as the process exiting would. */
  close(): void;
}

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

/**
 * One simulated cuzk-daemon: the real proto over real gRPC on `cfg.listen`. A TCP proxy in front of
 * the gRPC server lets a fault drop client connections mid-proof. Used by the daemon process
 * (main.ts) and, many at once, by the host farm.
 */
export function startSimDaemon(o: SimDaemonOptions): SimDaemon {
  const { cfg, scenario, scale, log, numGpus, gpuName } = o;
  const sockets = new Set<net.Socket>();
  let proxy: net.Server | null = null;
  let closed = false;
  const engine = new ProvingEngine(scenario, scale, cfg.partitionWorkers, cfg.paramCache, numGpus, {
    log,
    dropConnections: () => {
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    die: o.die,
  });

  const handlers = {
    async Prove(call: Call, cb: Cb) {
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
        return cb(null, {
          result: {
            job_id: 'job-of-another-client',
            status: 'COMPLETED',
            proof: Buffer.alloc(0),
            error_message: '',
            queue_wait_ms: '0',
            srs_load_ms: '0',
            synthesis_ms: '0',
            gpu_compute_ms: '0',
            total_ms: '18446744073709551615',
          },
        });
      }
      cb(null, {
        result: {
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

  const server = new grpc.Server({
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': scenario.faults.badResponses === 'oversized' ? -1 : MAX_MESSAGE_BYTES,
  });
  server.addService(loadProvingEngine().service, handlers as unknown as grpc.UntypedServiceImplementation);

  /** The real daemon exits when it cannot bind its port. */
  function failToBind(why: string): void {
    log(`ERROR cuzk_daemon: ${why}`);
    try {
      o.die('panic');
    } catch {
      /* an in-process daemon's die() throws after ending its stand-in */
    }
  }

  log(`INFO cuzk_daemon: starting, partition_workers=${cfg.partitionWorkers} gpus=${numGpus}x ${gpuName}`);
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, innerPort) => {
    if (err) return failToBind(`bind failed: ${err.message}`);
    if (scenario.faults.neverReady) {
      log('INFO cuzk_daemon: loading SRS porep-32g …');
      return; // hangs in SRS load forever, never serves
    }
    setTimeout(
      () => {
        if (closed) return;
        const [host, port] = splitHostPort(cfg.listen);
        proxy = net.createServer((client) => {
          const upstream = net.connect(innerPort, '127.0.0.1');
          sockets.add(client);
          client.on('close', () => sockets.delete(client));
          client.pipe(upstream).pipe(client);
          client.on('error', () => upstream.destroy());
          upstream.on('error', () => client.destroy());
          client.on('close', () => upstream.destroy());
        });
        proxy.once('error', (e) => failToBind(`cannot listen on ${cfg.listen}: ${e.message}`));
        proxy.listen(port, host, () => log(`INFO cuzk_daemon: ready, serving on ${cfg.listen}`));
      },
      scaledMs(scenario.startupSec, scale),
    );
  });

  return {
    close() {
      closed = true;
      proxy?.close();
      for (const s of sockets) s.destroy();
      sockets.clear();
      server.forceShutdown();
    },
  };
}

function splitHostPort(addr: string): [string, number] {
  const clean = addr.replace(/^https?:\/\//, '');
  const i = clean.lastIndexOf(':');
  return [clean.slice(0, i), Number(clean.slice(i + 1))];
}
