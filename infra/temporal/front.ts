import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { sqlSafePort } from './production-server.js';

/**
 * The cluster's front, HAProxy from the distribution's package, with two listeners:
 *
 * - control: TCP pass-through to every frontend. The control worker and the CLI speak mTLS to the
 *   Temporal server's own frontend through it; the front sees only ciphertext.
 * - hosts: for rented GPU hosts, which cannot carry a client certificate (Vast caps an env entry at 256
 *   characters). TLS ends here; a request passes only with an `authorization: Bearer …` header and only
 *   for the calls an activity worker makes, then goes on over mTLS with the front's own certificate,
 *   the header unchanged. The server's claim mapper verifies the bearer token (a per-rental host token)
 *   and its authorizer decides what it reaches (infra/temporal/server/hostauth, docs/security.md): the
 *   front's certificate alone grants nothing there. Before a server without our authorizer, `hostKeys`
 *   makes the front check a shared key itself, as it did before host tokens.
 */
export interface FrontOptions {
  /** host:port of every Temporal frontend. */
  frontends: string[];
  caFile: string;
  serverName: string;
  hostFront: { certFile: string; keyFile: string; clientCertFile: string; clientKeyFile: string };
  /**
   * Only before a server without our authorizer: key name → SHA-256 (hex) of each shared host key the
   * front accepts (the keys themselves never reach its files). Omitted: the server verifies host tokens.
   */
  hostKeys?: Record<string, string>;
  /** Where the config, key map, certificate bundles and log go. */
  dir: string;
  haproxy?: string;
}

export interface Front {
  controlAddress: string;
  hostAddress: string;
  logFile: string;
  stop(): Promise<void>;
}

/**
 * The calls a GPU-host worker (activities only, one queue) may make; anything else is refused here
 * already. The server's authorizer allows the same list (hostauth.HostCalls) and checks each call's
 * queue or task token against the host's token.
 */
export const HOST_WORKER_CALLS = [
  'GetSystemInfo',
  'DescribeNamespace',
  'PollActivityTaskQueue',
  'RecordActivityTaskHeartbeat',
  'RespondActivityTaskCompleted',
  'RespondActivityTaskFailed',
  'RespondActivityTaskCanceled',
  'RecordWorkerHeartbeat',
  'ShutdownWorker',
] as const;

export function apiKeyHash(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

const NAME = /^[A-Za-z0-9_.-]+$/;
const HEX64 = /^[0-9a-f]{64}$/;

/** Where the listeners bind: loopback here; a deployment's front binds every address (`bind: '0.0.0.0'`). */
export interface FrontListeners {
  control: number;
  hosts: number;
  bind?: string;
}

export function haproxyConfig(
  o: FrontOptions,
  ports: FrontListeners,
  files: { keyMap: string; frontPem: string; clientPem: string },
): string {
  const bind = ports.bind ?? '127.0.0.1';
  const servers = (extra: string) =>
    o.frontends.map((a, i) => `  server node${i + 1} ${a} check inter 1s fall 2 rise 2${extra}`).join('\n');
  const calls = HOST_WORKER_CALLS.join('|');
  const credential = o.hostKeys
    ? `  http-request set-var(txn.host) req.hdr(authorization),regsub(^Bearer\\ ,),sha2(256),hex,lower,map(${files.keyMap})
  http-request deny deny_status 401 unless { var(txn.host) -m found }
  http-request set-header x-gpu-fleet-host %[var(txn.host)]`
    : `  # The token itself is the server's to verify; a call without one is turned away here.
  http-request deny deny_status 401 unless { req.hdr(authorization) -m reg -i ^Bearer\\ .+ }`;
  return `global
  log stdout format raw local0
  # Each proxied connection holds two descriptors; 4000 fit the default 20000-descriptor limit here.
  maxconn 4000

defaults
  log global
  timeout connect 5s
  # Long polls hold a call for up to 70 s; workers keep one open per queue.
  timeout client 5m
  timeout server 5m
  timeout tunnel 1h

frontend control
  bind ${bind}:${ports.control}
  mode tcp
  default_backend frontends_tcp

backend frontends_tcp
  mode tcp
  balance leastconn
  # A dead node's connections are cut at once, so clients reconnect to a live one instead of waiting.
  default-server on-marked-down shutdown-sessions
${servers('')}

frontend hosts
  bind ${bind}:${ports.hosts} ssl crt ${files.frontPem} alpn h2
  mode http
  option httplog
${credential}
  http-request deny deny_status 403 unless { path_reg ^/temporal\\.api\\.workflowservice\\.v1\\.WorkflowService/(${calls})$ }
  default_backend frontends_h2

backend frontends_h2
  mode http
  balance leastconn
  default-server on-marked-down shutdown-sessions
${servers(` ssl verify required ca-file ${o.caFile} crt ${files.clientPem} sni str(${o.serverName}) alpn h2`)}
`;
}

/** Starts HAProxy in the foreground (-db) and waits until both listeners accept connections. */
export async function startFront(o: FrontOptions): Promise<Front> {
  for (const [name, hash] of Object.entries(o.hostKeys ?? {})) {
    if (!NAME.test(name)) throw new Error(`host key name "${name}" must match ${String(NAME)}`);
    if (!HEX64.test(hash)) throw new Error(`host key "${name}" must be a lowercase SHA-256 hex digest`);
  }
  const ports = { control: await sqlSafePort(), hosts: await sqlSafePort() };
  const files = {
    keyMap: path.join(o.dir, 'host-keys.map'),
    frontPem: path.join(o.dir, 'host-front-bundle.pem'),
    clientPem: path.join(o.dir, 'host-front-client-bundle.pem'),
    config: path.join(o.dir, 'haproxy.cfg'),
    log: path.join(o.dir, 'haproxy.log'),
  };
  if (o.hostKeys) {
    writeFileSync(
      files.keyMap,
      Object.entries(o.hostKeys)
        .map(([n, h]) => `${h} ${n}\n`)
        .join(''),
      { mode: 0o600 },
    );
  }
  // HAProxy reads a certificate and its key from one file.
  const bundle = (cert: string, key: string) => readFileSync(cert, 'utf8') + readFileSync(key, 'utf8');
  writeFileSync(files.frontPem, bundle(o.hostFront.certFile, o.hostFront.keyFile), { mode: 0o600 });
  writeFileSync(files.clientPem, bundle(o.hostFront.clientCertFile, o.hostFront.clientKeyFile), { mode: 0o600 });
  writeFileSync(files.config, haproxyConfig(o, ports, files));

  const logFd = openSync(files.log, 'w');
  const child: ChildProcess = spawn(o.haproxy ?? 'haproxy', ['-db', '-f', files.config], {
    stdio: ['ignore', logFd, logFd],
  });
  closeSync(logFd);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  try {
    await spawned;
    for (const port of [ports.control, ports.hosts]) await waitForListener(port, child, files.log);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    controlAddress: `127.0.0.1:${ports.control}`,
    hostAddress: `127.0.0.1:${ports.hosts}`,
    logFile: files.log,
    stop,
  };
}

async function waitForListener(port: number, child: ChildProcess, log: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`haproxy exited with ${child.exitCode}:\n${readFileSync(log, 'utf8')}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`haproxy did not listen on ${port} within 10 s:\n${readFileSync(log, 'utf8')}`);
}
