import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { msToTs } from '@temporalio/common/lib/time.js';
import pg from 'pg';
import { SA } from '../../workflows/domain/search-attributes.js';
import { MAX_NAMESPACE_POLLS } from './dev-server.js';
import { cacheDir } from './ensure-cli.js';
import { ensureTemporalServer } from './ensure-server.js';
import { type FrontendTls, frontendTlsConfig, tlsConnectionOptions } from './server-tls.js';
import { sqlSearchAttributes } from './sql-visibility.js';

/**
 * The Temporal server as a cluster runs it: the pinned `temporal-server` binary with its four services
 * (frontend, history, matching, worker) on PostgreSQL store and visibility databases made by
 * `temporal-sql-tool` — the same steps as infra/compose and infra/k8s, in one process on this machine.
 */
export interface ProductionServerOptions {
  /** Frontend gRPC port; a free one when omitted. */
  port?: number;
  namespace?: string;
  storeDatabase?: string;
  visibilityDatabase?: string;
  /** Drop both databases first (tests); otherwise an existing store is kept and upgraded in place. */
  fresh?: boolean;
  /** Postgres to keep Temporal's databases in (the role needs CREATEDB). */
  postgresUrl?: string;
  /** Fixed when the store is created; a cluster's cannot change later. */
  numHistoryShards?: number;
  /**
   * This process's name within a cluster: its own run directory (config, log) beside the others'. The
   * nodes share the store and find each other through its `cluster_membership` table.
   */
  node?: string;
  /**
   * mTLS on the frontend (infra/temporal/server-tls.ts); then our authorizer takes its control subjects
   * for the control plane and refuses calls with no credential. Plaintext when omitted, and a call with
   * no credential is the control plane's (GPU_FLEET_ANONYMOUS=control): loopback only.
   */
  tls?: FrontendTls;
  /** GPU_FLEET_HOST_TOKEN_KEY: what host tokens are verified with; without it the server refuses every one. */
  hostTokenKey?: string;
  /** GPU_FLEET_REVOKED_HOSTS_FILE: labels of retired rentals, whose tokens the server refuses (reread every 10 s). */
  revokedHostsFile?: string;
  log?: (msg: string) => void;
}

export interface ProductionServer {
  address: string;
  namespace: string;
  version: string;
  pid: number | null;
  /** Where the static config, dynamic config and server log are. */
  runDir: string;
  logFile: string;
  /** SIGTERM, then SIGKILL after 20 s. */
  stop(): Promise<void>;
  /** SIGKILL at once, as a crashed host would (fault tests). */
  kill(): Promise<void>;
  /** Starts the stopped process again with the same config and ports. */
  restart(): Promise<void>;
}

const SCHEMAS = { store: 'postgresql/v12/temporal', visibility: 'postgresql/v12/visibility' } as const;
const SQL_PLUGIN = 'postgres12';
// How long closed workflows stay readable (history, UI); a day is the server's minimum.
const RETENTION = '3 days';

export async function startProductionServer(opts: ProductionServerOptions = {}): Promise<ProductionServer> {
  const log = opts.log ?? ((m: string) => console.error(m));
  const namespace = opts.namespace ?? 'default';
  const storeDb = opts.storeDatabase ?? 'temporal';
  const visibilityDb = opts.visibilityDatabase ?? 'temporal_visibility';
  const pgUrl = new URL(opts.postgresUrl ?? process.env.TEMPORAL_PG_URL ?? 'postgres://postgres@127.0.0.1:5432');
  const searchAttributes = sqlSearchAttributes(); // fails before anything is created if they cannot fit
  const bins = ensureTemporalServer(log);

  const pgConn = {
    host: pgUrl.hostname,
    port: Number(pgUrl.port || 5432),
    user: decodeURIComponent(pgUrl.username || 'postgres'),
    password: decodeURIComponent(pgUrl.password),
  };
  await prepareDatabase(bins.sqlTool, pgConn, storeDb, SCHEMAS.store, opts.fresh ?? false, log);
  await prepareDatabase(bins.sqlTool, pgConn, visibilityDb, SCHEMAS.visibility, opts.fresh ?? false, log);

  const port = opts.port ?? (await sqlSafePort());
  const runDir = path.join(cacheDir(), 'production-engine', storeDb, ...(opts.node ? [opts.node] : []));
  const configDir = path.join(runDir, 'config');
  mkdirSync(configDir, { recursive: true });
  const dynamicConfigFile = path.join(configDir, 'dynamic.yaml');
  writeFileSync(dynamicConfigFile, JSON.stringify(dynamicConfig(), null, 2));
  const config = await staticConfig({
    port,
    pg: pgConn,
    storeDb,
    visibilityDb,
    numHistoryShards: opts.numHistoryShards ?? 4,
    dynamicConfigFile,
    tls: opts.tls,
  });
  // JSON is YAML: the server reads it as its static config, with no templating involved.
  writeFileSync(path.join(configDir, 'production.yaml'), JSON.stringify(config, null, 2));

  const logFile = path.join(runDir, 'server.log');
  const address = `127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  const killOnExit = () => child?.kill('SIGKILL');
  const exit = async (signal: 'SIGTERM' | 'SIGKILL') => {
    const c = child;
    child = null;
    process.removeListener('exit', killOnExit);
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill(signal);
    const timer = setTimeout(() => c.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  };
  const stop = () => exit('SIGTERM');
  const launch = async (appendLog: boolean) => {
    const logFd = openSync(logFile, appendLog ? 'a' : 'w');
    const c = spawn(bins.server, ['--root', runDir, '--config', 'config', '--env', 'production', 'start'], {
      stdio: ['ignore', logFd, logFd],
      env: { ...process.env, ...authEnv(opts) },
    });
    closeSync(logFd);
    child = c;
    process.once('exit', killOnExit);
    const tail = () => readFileSync(logFile, 'utf8').slice(-3000);
    return waitForFrontend(address, c, tail, opts.tls);
  };
  try {
    const connection = await launch(false);
    try {
      await ensureNamespace(connection, namespace);
      await ensureSearchAttributes(connection, namespace, searchAttributes);
      await waitUntilSearchAttributesAccepted(connection, namespace);
    } finally {
      await connection.close();
    }
  } catch (err) {
    await stop();
    throw err;
  }
  log(
    `Temporal server ${bins.version} on PostgreSQL (${storeDb}, ${visibilityDb}) at ${address}, namespace ${namespace}`,
  );
  return {
    address,
    namespace,
    version: bins.version,
    get pid() {
      return child?.pid ?? null;
    },
    runDir,
    logFile,
    stop,
    kill: () => exit('SIGKILL'),
    async restart() {
      if (child) throw new Error(`the server at ${address} is still running`);
      await (await launch(true)).close();
    },
  };
}

/**
 * Our authorizer's settings (infra/temporal/server/hostauth/config.go), always these four: none is
 * inherited. The per-host limits and the token lifetime keep their defaults.
 */
function authEnv(opts: ProductionServerOptions): Record<string, string> {
  return {
    GPU_FLEET_HOST_TOKEN_KEY: opts.hostTokenKey ?? '',
    GPU_FLEET_CONTROL_SUBJECTS: opts.tls?.controlSubjects.join(',') ?? '',
    GPU_FLEET_ANONYMOUS: opts.tls ? 'deny' : 'control',
    GPU_FLEET_REVOKED_HOSTS_FILE: opts.revokedHostsFile ?? '',
  };
}

interface PgConn {
  host: string;
  port: number;
  user: string;
  password: string;
}

/** Creates the database and its schema with temporal-sql-tool, or upgrades an existing one to the pinned schema. */
async function prepareDatabase(
  sqlTool: string,
  conn: PgConn,
  database: string,
  schema: string,
  fresh: boolean,
  log: (msg: string) => void,
): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`database name "${database}" is not a plain identifier`);
  const admin = new pg.Client({ ...conn, database: 'postgres' });
  await admin.connect();
  let exists: boolean;
  try {
    // FORCE: a test run that crashed may have left a server connected.
    if (fresh) await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])).rowCount === 1;
  } finally {
    await admin.end();
  }
  const tool = (...args: string[]) =>
    execFileSync(
      sqlTool,
      ['--ep', conn.host, '-p', String(conn.port), '-u', conn.user, '--pl', SQL_PLUGIN, '--db', database, ...args],
      // The password reaches the tool through its environment, never its argv (visible in ps).
      { env: { ...process.env, SQL_PASSWORD: conn.password }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
  try {
    if (!exists) {
      log(`creating ${database} (${schema})`);
      tool('create-database');
      tool('setup-schema', '-v', '0.0');
    }
    // Idempotent: brings a store made by an older pin up to this release's schema.
    tool('update-schema', '--schema-name', schema);
  } catch (err) {
    const e = err as { stderr?: Buffer; stdout?: Buffer; message: string };
    throw new Error(
      `temporal-sql-tool failed on ${database}: ${e.stderr?.toString() || e.stdout?.toString() || e.message}`,
    );
  }
}

function dynamicConfig(): Record<string, { value: unknown }[]> {
  // Every GPU host long-polls its own queue: the default 1200 concurrent polls per namespace run out near
  // 1000 hosts (the dev server and infra/k8s raise it the same way).
  // A host over its own call rate (our authorizer, per token) gets RESOURCE_EXHAUSTED, so its SDK backs
  // off, instead of upstream's generic PERMISSION_DENIED for an authorizer error.
  return {
    'frontend.namespaceCount': [{ value: MAX_NAMESPACE_POLLS }],
    'frontend.exposeAuthorizerErrors': [{ value: true }],
  };
}

async function staticConfig(p: {
  port: number;
  pg: PgConn;
  storeDb: string;
  visibilityDb: string;
  numHistoryShards: number;
  dynamicConfigFile: string;
  tls: FrontendTls | undefined;
}): Promise<Record<string, unknown>> {
  const sql = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: SQL_PLUGIN,
      databaseName,
      connectAddr: `${p.pg.host}:${p.pg.port}`,
      connectProtocol: 'tcp',
      user: p.pg.user,
      password: p.pg.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const service = async (grpcPort: number) => ({
    // bindOnIP, not bindOnLocalHost: several processes on this host form one cluster through their
    // membership ports, each announcing broadcastAddress in cluster_membership.
    rpc: { grpcPort, membershipPort: await sqlSafePort(), bindOnIP: '127.0.0.1' },
  });
  const frontend = await service(p.port);
  return {
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: p.numHistoryShards,
      datastores: {
        'postgres-default': sql(p.storeDb, 20),
        'postgres-visibility': sql(p.visibilityDb, 10),
      },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      ...(p.tls ? { tls: frontendTlsConfig(p.tls) } : {}),
    },
    services: {
      frontend: { rpc: { ...frontend.rpc, httpPort: await sqlSafePort() } },
      history: await service(await sqlSafePort()),
      matching: await service(await sqlSafePort()),
      worker: await service(await sqlSafePort()),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: `127.0.0.1:${p.port}` },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
    namespaceDefaults: { archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } } },
    dynamicConfigClient: { filepath: p.dynamicConfigFile, pollInterval: '10s' },
  };
}

/**
 * A free TCP port below 32768: the PostgreSQL schema keeps a service's ports in `cluster_membership` as
 * SMALLINT, so a port from the OS's ephemeral range (32768+) stops the server at its first heartbeat.
 * 12000–19999 also stays clear of the bench's host farm, which binds from SIM_FARM_PORT_BASE (21000) up.
 */
export async function sqlSafePort(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 12_000 + Math.floor(Math.random() * 8_000);
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free TCP port between 12000 and 20000');
}

async function retryUntil<T>(what: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      return await fn();
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  throw new Error(`${what} within ${timeoutMs / 1000} s: ${String(last)}`);
}

async function waitForFrontend(
  address: string,
  child: ChildProcess,
  tail: () => string,
  tls: FrontendTls | undefined,
): Promise<Connection> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`temporal-server exited with ${child.exitCode}:\n${tail()}`);
    try {
      const conn = await Connection.connect({
        address,
        connectTimeout: 1000,
        ...(tls ? { tls: tlsConnectionOptions(tls) } : {}),
      });
      try {
        await conn.workflowService.getSystemInfo({});
        return conn;
      } catch (err) {
        await conn.close();
        throw err;
      }
    } catch {
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`the Temporal frontend at ${address} did not answer within 90 s:\n${tail()}`);
}

const GRPC_ALREADY_EXISTS = 6;

async function ensureNamespace(connection: Connection, namespace: string): Promise<void> {
  await retryUntil(`namespace ${namespace} could not be registered`, 60_000, async () => {
    try {
      await connection.workflowService.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs(RETENTION),
      });
    } catch (err) {
      if ((err as { code?: number }).code !== GRPC_ALREADY_EXISTS) throw err;
    }
  });
  // The frontend learns of a new namespace on its registry's next refresh (seconds).
  await retryUntil(`namespace ${namespace} did not become visible`, 60_000, () =>
    connection.workflowService.describeNamespace({ namespace }),
  );
}

async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
  wanted: Record<string, number>,
): Promise<void> {
  const listed = await retryUntil('search attributes could not be listed', 30_000, () =>
    connection.operatorService.listSearchAttributes({ namespace }),
  );
  const have = listed.customAttributes ?? {};
  const missing: Record<string, number> = {};
  for (const [name, type] of Object.entries(wanted)) {
    if (have[name] === undefined) missing[name] = type;
    else if (have[name] !== type) {
      throw new Error(`search attribute ${name} exists with type ${have[name]}, we need ${type}; fix it by hand`);
    }
  }
  if (Object.keys(missing).length === 0) return;
  await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
}

/**
 * Starts (and terminates) a workflow carrying every one of our search attributes: the frontend validates
 * them against its cached view, which lags a registration by up to its refresh interval.
 */
async function waitUntilSearchAttributesAccepted(connection: Connection, namespace: string): Promise<void> {
  const client = new Client({ connection, namespace });
  const probe = new TypedSearchAttributes([
    { key: SA.stage, value: 'probe' },
    { key: SA.gpuModel, value: 'probe' },
    { key: SA.gpuCount, value: 0 },
    { key: SA.machineId, value: 'probe' },
    { key: SA.offerId, value: 0 },
    { key: SA.vastInstanceId, value: 0 },
    { key: SA.benchRate, value: 0 },
    { key: SA.dollarsPerHour, value: 0 },
    { key: SA.costUsd, value: 0 },
    { key: SA.failureType, value: 'probe' },
    { key: SA.outcome, value: 'probe' },
  ]);
  const workflowId = `search-attribute-probe-${process.pid}-${Date.now()}`;
  await retryUntil('our search attributes were not accepted', 90_000, () =>
    client.workflow.start('searchAttributeProbe', {
      taskQueue: 'search-attribute-probe',
      workflowId,
      typedSearchAttributes: probe,
    }),
  );
  await client.workflow.getHandle(workflowId).terminate('search attribute probe');
}
