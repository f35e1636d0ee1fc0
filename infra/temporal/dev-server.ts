import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import { Connection } from '@temporalio/client';
import { searchAttributeFlags } from '../../workflows/domain/search-attributes.js';
import { ensureTemporalCli } from './ensure-cli.js';

export interface DevServer {
  address: string;
  uiUrl: string | null;
  namespace: string;
  /** The server process we started (null for an external TEMPORAL_ADDRESS), for CPU accounting. */
  pid: number | null;
  stop(): Promise<void>;
}

export interface DevServerOptions {
  port?: number;
  uiPort?: number;
  headless?: boolean;
  /** SQLite file to persist across restarts; in-memory when omitted. */
  dbFile?: string;
  namespace?: string;
}

/** Concurrent long polls allowed per namespace (frontend.namespaceCount). */
export const MAX_NAMESPACE_POLLS = 20_000;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * A real Temporal server: TEMPORAL_ADDRESS if set (search attributes must already be registered there),
 * else `temporal server start-dev` with our search attributes and the web UI.
 */
export async function startDevServer(opts: DevServerOptions = {}): Promise<DevServer> {
  const namespace = opts.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default';
  if (process.env.TEMPORAL_ADDRESS) {
    return { address: process.env.TEMPORAL_ADDRESS, uiUrl: null, namespace, pid: null, stop: async () => undefined };
  }
  const cli = ensureTemporalCli();
  const port = opts.port ?? (await freePort());
  const uiPort = opts.headless ? null : (opts.uiPort ?? (await freePort()));
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--namespace',
    namespace,
    '--log-level',
    'warn',
    // Every GPU host long-polls its own queue: the default 1200 concurrent polls per namespace is
    // exhausted near 1000 hosts (a production cluster running such a fleet needs the same setting).
    '--dynamic-config-value',
    `frontend.namespaceCount=${MAX_NAMESPACE_POLLS}`,
  ];
  args.push(...(uiPort === null ? ['--headless'] : ['--ui-port', String(uiPort)]));
  if (opts.dbFile) args.push('--db-filename', opts.dbFile);
  for (const sa of searchAttributeFlags()) args.push('--search-attribute', sa);
  const child: ChildProcess = spawn(cli, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  // A crashed parent must not leave a server holding the ports.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const address = `127.0.0.1:${port}`;
  await waitForServer(address, child, () => stderr);
  return {
    address,
    uiUrl: uiPort === null ? null : `http://127.0.0.1:${uiPort}`,
    namespace,
    pid: child.pid ?? null,
    async stop() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

async function waitForServer(address: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`temporal server exited with ${child.exitCode}: ${stderr()}`);
    try {
      const conn = await Connection.connect({ address, connectTimeout: 1000 });
      await conn.workflowService.getSystemInfo({});
      await conn.close();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`temporal server at ${address} did not start within 60 s: ${stderr()}`);
}
