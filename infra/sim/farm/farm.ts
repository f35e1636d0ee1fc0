import { mkdir } from 'node:fs/promises';
import http from 'node:http';
import type { SpawnHostProcess } from '../../../activities/gpu-host/spawn.js';
import { heartbeatThrottleSec } from '../vast/host-boot.js';
import { portReserver } from '../ports.js';
import { BootSchema, boot, powerOff } from './hosts.js';
import { farmPorts } from './ports.js';
import { startStandin } from './standins.js';
import { type FarmState, parseStandinRequest, stopStandin } from './state.js';

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
  await mkdir(baseDir, { recursive: true });
  const st: FarmState = {
    baseDir,
    scale,
    throttleSec: opts.heartbeatThrottleSec ?? heartbeatThrottleSec(scale),
    spawn: opts.spawn,
    hosts: new Map(),
    standins: new Map(),
    connections: new Map(),
    // A daemon listens seconds after its port is chosen; below the kernel's ephemeral range nothing else takes it meanwhile.
    reservePort: portReserver(PORT_BASE, PORT_SPAN),
  };
  const server = http.createServer((req, res) => void handle(st, req, res));
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const addr = server.address();
  if (!addr || typeof addr === 'string') throw new Error('host farm: no address');
  const url = `http://127.0.0.1:${addr.port}`;
  // The stand-ins find us through the environment they inherit from the GPU-host workers.
  process.env.SIM_FARM_URL = url;

  return {
    url,
    hosts: () => st.hosts.size,
    standins: () => st.standins.size,
    async close() {
      await Promise.all([...st.hosts.keys()].map((id) => powerOff(st, id)));
      server.close();
      for (const c of st.connections.values()) await (await c).close();
    },
  };
}

async function handle(st: FarmState, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://farm');
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = Buffer.concat(chunks).toString('utf8');
  try {
    await route(st, req.method, url.pathname, body, res);
  } catch (err) {
    reply(res, 400, { error: err instanceof Error ? err.message : String(err) });
  }
}

/** The farm's API: boot and power off machines (the Vast simulator), start and stop stand-ins (standin.sh). */
async function route(st: FarmState, method: string | undefined, p: string, body: string, res: http.ServerResponse) {
  if (method === 'POST' && p === '/hosts') {
    const workDir = await boot(st, BootSchema.parse(JSON.parse(body)));
    return reply(res, 201, { workDir });
  }
  const del = /^\/hosts\/(\d+)$/.exec(p);
  if (method === 'DELETE' && del) {
    await powerOff(st, Number(del[1]));
    return reply(res, 200, { ok: true });
  }
  if (method === 'POST' && p === '/standins') {
    const sreq = parseStandinRequest(body);
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    const refused = startStandin(st, sreq, res);
    if (refused) return void res.end(`err ${refused}\nexit 1\n`);
    res.flushHeaders();
    return;
  }
  const stop = /^\/standins\/(\d+)\/stop$/.exec(p);
  if (method === 'POST' && stop) {
    stopStandin(st, Number(stop[1]));
    return reply(res, 200, { ok: true });
  }
  if (method === 'GET' && p === '/hosts') return reply(res, 200, { hosts: [...st.hosts.keys()] });
  reply(res, 404, { error: `no route ${method} ${p}` });
}

function reply(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}
