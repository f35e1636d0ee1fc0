import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';
import { GpuHostConfigSchema, loadConfig } from '../../../workers/setup/config.js';
import type { SpawnHostProcess } from '../../../activities/gpu-host/spawn.js';
import { createGpuHost, type GpuHost } from '../../../workers/setup/gpu-host-factory.js';
import { runFeeder } from '../feeder.js';
import { simFitnessEnv } from '../host-tools/env.js';
import { simulateParamfetch } from '../fetch-params.js';
import { scaledMs, SimOfferSchema, type SimOffer } from '../scenario.js';
import { startSimDaemon, type SimDaemon } from '../cuzk/server.js';
import { readDaemonConfig } from '../cuzk/toml-config.js';
import { heartbeatThrottleSec, prepareHostDir } from '../vast/host-boot.js';
import { portReserver } from '../ports.js';
import { farmPorts } from './ports.js';

const STANDIN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'standin.sh');
// Each farm process (shard) picks daemon ports from its own range.
const { base: PORT_BASE, span: PORT_SPAN } = farmPorts();

/**
 * Many simulated GPU machines in one process, for scale runs where a Node process per host (worker,
 * daemon, fetcher, feeder) would swamp two cores. Each machine still runs the production GPU-host
 * worker code on its own task queue; its daemon, production prover and parameter fetch are simulated
 * in-process but started and stopped through a small bash stand-in (standin.sh), so the worker's
 * process supervision — spawn, output, SIGTERM, SIGKILL, exit codes, log files — is the real code path.
 * A stand-in holds one HTTP request open for as long as its simulation runs: the response carries the
 * output and the exit code, and the connection closing tells us the process died.
 */
export interface HostFarm {
  url: string;
  hosts(): number;
  /** Simulated processes running (each behind a live stand-in). */
  standins(): number;
  close(): Promise<void>;
}

interface FarmHost {
  instanceId: number;
  offer: SimOffer;
  workDir: string;
  host: GpuHost;
  run: Promise<void>;
}

interface Standin {
  pid: number;
  kind: StandinRequest['kind'];
  hostId: number | null;
  /** Ends the simulation (the process is stopping or gone). */
  stop(): void;
  /** Ends the stand-in's process with this exit code (a simulated crash or the fetch's end). */
  exit(code: number): void;
}

const StandinBase = z.object({ pid: z.number().int().positive(), concurrency: z.number() });
const StandinRequestSchema = z.union([
  StandinBase.extend({ kind: z.enum(['daemon', 'production']), ref: z.string().min(1) }),
  StandinBase.extend({
    kind: z.literal('paramfetch'),
    cache: z.string().min(1),
    seconds: z.number().nonnegative(),
    fault: z.enum(['ok', 'stall', 'fail']),
  }),
]);
type StandinRequest = z.infer<typeof StandinRequestSchema>;

/** standin.sh's request body: kind, pid, proof concurrency, then the command's own arguments, one per line. */
function parseStandinRequest(body: string): StandinRequest {
  const [kind, pid, concurrency, ...args] = body.replace(/\n$/, '').split('\n');
  const common = { kind, pid: Number(pid), concurrency: Math.max(1, Number(concurrency) || 1) };
  return StandinRequestSchema.parse(
    kind === 'paramfetch'
      ? { ...common, cache: args[0], seconds: Number(args[1]), fault: args[2] }
      : { ...common, ref: args[0] },
  );
}

const BootSchema = z.object({
  instanceId: z.number().int().positive(),
  offer: SimOfferSchema,
  env: z.record(z.string(), z.string()),
});

export async function startHostFarm(opts: {
  baseDir: string;
  scale: number;
  port?: number;
  /** Seconds between a host's heartbeats; by default compressed with the time scale. */
  heartbeatThrottleSec?: number;
  /** How hosts start their processes (default: children of the farm process). */
  spawn?: SpawnHostProcess;
}): Promise<HostFarm> {
  const { baseDir, scale } = opts;
  const throttleSec = opts.heartbeatThrottleSec ?? heartbeatThrottleSec(scale);
  await mkdir(baseDir, { recursive: true });
  const hosts = new Map<number, FarmHost>();
  const standins = new Map<number, Standin>();
  const connections = new Map<string, Promise<NativeConnection>>();
  const connect = (address: string) => {
    let c = connections.get(address);
    if (!c) connections.set(address, (c = NativeConnection.connect({ address })));
    return c;
  };

  // A daemon listens seconds after its port is chosen; below the kernel's ephemeral range nothing else takes it meanwhile.
  const reservePort = portReserver(PORT_BASE, PORT_SPAN);

  async function boot(req: z.infer<typeof BootSchema>): Promise<string> {
    const { instanceId, offer, env } = req;
    const { workDir, paramCache, c1Path } = prepareHostDir(baseDir, instanceId, offer);
    const sc = offer.sim.host;
    const cfg = loadConfig(GpuHostConfigSchema, {
      ...env,
      ...(await simFitnessEnv(offer)),
      CUZK_ADDRESS: `127.0.0.1:${await reservePort()}`,
      CUZK_DAEMON_CMD: JSON.stringify(['bash', STANDIN, 'daemon']),
      PARAMFETCH_CMD: JSON.stringify([
        'bash',
        STANDIN,
        'paramfetch',
        paramCache,
        String(scaledMs(sc.paramfetchSec, scale) / 1000),
        sc.faults.paramfetch,
      ]),
      PRODUCTION_CMD: JSON.stringify(['bash', STANDIN, 'production', workDir]),
      PARAM_CACHE_DIR: paramCache,
      WORK_DIR: workDir,
      C1_PATH: c1Path,
      MINER_ID: '1000',
      HEARTBEAT_THROTTLE_SEC: String(throttleSec),
    });
    const host = await createGpuHost(cfg, await connect(cfg.TEMPORAL_ADDRESS), opts.spawn);
    const run = host.worker.run().catch((err: unknown) => {
      console.error(`host ${instanceId}: worker stopped: ${err instanceof Error ? err.message : String(err)}`);
    });
    hosts.set(instanceId, { instanceId, offer, workDir, host, run });
    return workDir;
  }

  /** Destroyed at Vast: the machine's processes die at once and its worker stops polling. */
  async function powerOff(instanceId: number): Promise<void> {
    const h = hosts.get(instanceId);
    if (!h) return;
    hosts.delete(instanceId);
    for (const s of standins.values()) if (s.hostId === instanceId) killQuietly(s.pid, 'SIGKILL');
    try {
      h.host.worker.shutdown();
    } catch {
      /* already stopped (it failed, and boot logged why) */
    }
    await h.run;
    await h.host.release();
  }

  function hostOf(file: string): FarmHost | undefined {
    for (const h of hosts.values()) if (file.startsWith(h.workDir + path.sep)) return h;
    return undefined;
  }

  /**
   * Starts the simulation a stand-in process stands for; its output and exit code go to `res`.
   * Returns why it cannot, or null.
   */
  function startStandin(req: StandinRequest, res: http.ServerResponse): string | null {
    const send = (line: string) => {
      if (!res.writableEnded) res.write(`${line}\n`);
    };
    // Whichever comes first (an exit we send, a stop request, the stand-in's connection closing) ends it.
    const end = () => {
      if (standins.get(req.pid) === standin) stopStandin(req.pid);
    };
    const standin: Standin = {
      pid: req.pid,
      kind: req.kind,
      hostId: null,
      stop: () => undefined,
      exit(code) {
        send(`exit ${code}`);
        res.end();
        end();
      },
    };
    const register = () => {
      standins.set(req.pid, standin);
      // The stand-in's process ended (stopped, killed or crashed): so does its simulation.
      res.on('close', end);
      return null;
    };
    if (req.kind === 'paramfetch') {
      standin.stop = simulateParamfetch({
        cache: req.cache,
        totalMs: req.seconds * 1000,
        fault: req.fault,
        out: (l) => send(`out ${l}`),
        err: (l) => send(`err ${l}`),
        exit: (code) => standin.exit(code),
      });
      return register();
    }
    const h = hostOf(req.kind === 'daemon' ? req.ref : path.join(req.ref, 'x'));
    if (!h) return `no farm host owns ${req.ref}`;
    standin.hostId = h.instanceId;
    const logFile = path.join(h.workDir, req.kind === 'daemon' ? 'cuzk-daemon.log' : 'production.log');
    const log: WriteStream = createWriteStream(logFile, { flags: 'a' });
    const line = (l: string) => log.write(`\x1b[2m${new Date().toISOString()}\x1b[0m ${l}\n`);
    if (req.kind === 'daemon') {
      // The worker stopped the previous daemon before starting this one; its connection may not have
      // closed yet, and a real process would already have closed its port.
      for (const [otherPid, other] of standins) {
        if (other.hostId === h.instanceId && other.kind === 'daemon') {
          standins.delete(otherPid);
          other.stop();
        }
      }
      let daemon: SimDaemon | null = null;
      const die = (why: 'oom' | 'panic'): never => {
        daemon?.close();
        // The real daemon is OOM-killed by the kernel (SIGKILL) or panics with exit code 101.
        if (why === 'oom') killQuietly(req.pid, 'SIGKILL');
        else standin.exit(101);
        throw new Error(why === 'oom' ? 'daemon was OOM-killed' : 'daemon panicked');
      };
      daemon = startSimDaemon({
        cfg: readDaemonConfig(req.ref),
        scenario: h.offer.sim.host,
        scale,
        gpuName: h.offer.gpu_name,
        numGpus: h.offer.num_gpus,
        log: line,
        die,
      });
      standin.stop = () => {
        daemon?.close();
        log.end();
      };
    } else {
      const abort = new AbortController();
      const cuzkAddress = readDaemonConfig(path.join(h.workDir, 'cuzk-daemon.toml')).listen;
      void runFeeder({
        cuzkAddress,
        c1Path: path.join(h.workDir, 'c1.json'),
        concurrency: req.concurrency,
        minerId: 1000,
        tag: `curio-sim/${req.pid}`,
        log: line,
        signal: abort.signal,
      }).catch(() => undefined);
      standin.stop = () => {
        abort.abort();
        log.end();
      };
    }
    return register();
  }

  function stopStandin(pid: number): void {
    const s = standins.get(pid);
    standins.delete(pid);
    s?.stop();
  }

  const server = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://farm');
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      try {
        if (req.method === 'POST' && url.pathname === '/hosts') {
          const workDir = await boot(BootSchema.parse(JSON.parse(body)));
          return reply(res, 201, { workDir });
        }
        const del = /^\/hosts\/(\d+)$/.exec(url.pathname);
        if (req.method === 'DELETE' && del) {
          await powerOff(Number(del[1]));
          return reply(res, 200, { ok: true });
        }
        if (req.method === 'POST' && url.pathname === '/standins') {
          const sreq = parseStandinRequest(body);
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          const refused = startStandin(sreq, res);
          if (refused) return res.end(`err ${refused}\nexit 1\n`);
          res.flushHeaders();
          return;
        }
        const stop = /^\/standins\/(\d+)\/stop$/.exec(url.pathname);
        if (req.method === 'POST' && stop) {
          stopStandin(Number(stop[1]));
          return reply(res, 200, { ok: true });
        }
        if (req.method === 'GET' && url.pathname === '/hosts') return reply(res, 200, { hosts: [...hosts.keys()] });
        reply(res, 404, { error: `no route ${req.method} ${url.pathname}` });
      } catch (err) {
        reply(res, 400, { error: err instanceof Error ? err.message : String(err) });
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const addr = server.address();
  if (!addr || typeof addr === 'string') throw new Error('host farm: no address');
  const url = `http://127.0.0.1:${addr.port}`;
  // The stand-ins find us through the environment they inherit from the GPU-host workers.
  process.env.SIM_FARM_URL = url;

  return {
    url,
    hosts: () => hosts.size,
    standins: () => standins.size,
    async close() {
      await Promise.all([...hosts.keys()].map(powerOff));
      server.close();
      for (const c of connections.values()) await (await c).close();
    },
  };
}

function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    /* already gone */
  }
}

function reply(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}
