import { randomUUID } from 'node:crypto';
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import {
  bundleWorkflowCode,
  DefaultLogger,
  makeTelemetryFilterString,
  NativeConnection,
  Runtime,
  type Worker,
} from '@temporalio/worker';
import type pg from 'pg';
import { inject } from 'vitest';
import { createPool } from '../../activities/store/pool.js';
import { type SimOffer, timeScale } from '../../infra/sim/scenario.js';
import { freePort } from '../../infra/temporal/dev-server.js';
import { startVastSim, type VastSim } from '../../infra/sim/vast/server.js';
import type { ControlConfig } from '../../workers/setup/config.js';
import { createControlWorker } from '../../workers/setup/control-worker-factory.js';
import { WORKFLOWS_PATH } from '../../workers/setup/workflow-source.js';
import { clockOf } from '../../workflows/domain/policy/clock.js';
import { createLogger } from '../../workers/setup/logger.js';
import { fleetRegistry } from '../../workers/setup/metrics-registry.js';
import { serveMetrics } from '../../workers/setup/metrics-server.js';
import { prometheusOptions } from '../../workers/setup/runtime.js';
import { dataConverter } from '../../workers/setup/temporal-connection.js';
import type { LifecycleRequest } from '../../workflows/domain/types.js';

let bundle: Promise<{ code: string }> | null = null;

/** Bundling takes seconds; do it once per test file. */
export function workflowBundle(): Promise<{ code: string }> {
  return (bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') }));
}

// Expected kills are logged by the SDK at WARN; tests log only errors so real failures stand out. That
// includes the native core's own logs (its gRPC retries while a fault test has the server down).
const sdkMetricsBind = `127.0.0.1:${await freePort()}`;
// A test that reads the workers' JSON log lines names a file here before it imports this module.
const jsonLog = process.env.FLEET_ENV_JSON_LOG;
Runtime.install({
  logger: jsonLog ? createLogger('INFO', jsonLog) : new DefaultLogger('ERROR'),
  telemetryOptions: {
    logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} },
    // The production exporter's options, so tests see the metric names operators see.
    metrics: { prometheus: prometheusOptions(sdkMetricsBind) },
  },
});
/** The control worker's one /metrics as production serves it: the fleet's families, then the SDK's. */
export const METRICS_URL = (
  await serveMetrics({
    bind: '127.0.0.1:0',
    registry: fleetRegistry().registry,
    sdkUrl: `http://${sdkMetricsBind}/metrics`,
  })
).url;

export const API_KEY = 'test-vast-key-' + randomUUID();

export interface FleetEnv {
  client: Client;
  sim: VastSim;
  pool: pg.Pool;
  taskQueue: string;
  worker: Worker;
  workerRun: Promise<void>;
  close(): Promise<void>;
}

/** Real Temporal, real Postgres, the Vast simulator over HTTP, and the production control worker. */
export async function startFleetEnv(
  offers: SimOffer[],
  opts: {
    workerApiKey?: string;
    security?: Partial<ControlConfig>;
    temporalAddress?: string;
    /** mTLS to the server's frontend (test/engine/cluster-*.test.ts). */
    temporalTls?: ConnectionOptions['tls'];
    /** A test with a Postgres of its own (one it stops) passes its URL; others share the global one. */
    databaseUrl?: string;
  } = {},
): Promise<FleetEnv> {
  // A test with a Temporal server of its own (one it restarts) passes its address; others share the global one.
  const address = opts.temporalAddress ?? inject('temporalAddress');
  const sim = await startVastSim({ offers, apiKey: API_KEY });
  const databaseUrl = opts.databaseUrl ?? inject('databaseUrl');
  const pool = createPool(databaseUrl, 4);
  const tls = opts.temporalTls ? { tls: opts.temporalTls } : {};
  const nativeConnection = await NativeConnection.connect({ address, ...tls });
  const taskQueue = `test-control-${randomUUID()}`;
  const connection = await Connection.connect({ address, ...tls });
  const client = new Client({ connection, dataConverter: dataConverter(opts.security ?? {}) });
  const worker = await createControlWorker(
    {
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: 'default',
      DATABASE_URL: databaseUrl,
      VAST_API_URL: sim.url,
      VAST_API_KEY: opts.workerApiKey ?? API_KEY,
      HOST_TEMPORAL_ADDRESS: address,
      VAST_POLL_INTERVAL_MS: 200,
      ...opts.security,
    },
    pool,
    { connection: nativeConnection, client, taskQueue, workflowBundle: await workflowBundle() },
  );
  const workerRun = worker.run();
  return {
    client,
    sim,
    pool,
    taskQueue,
    worker,
    workerRun,
    async close() {
      worker.shutdown();
      await workerRun;
      await sim.close();
      await connection.close();
      await nativeConnection.close();
      await pool.end();
    },
  };
}

/** The simulators' clock (SIM_TIME_SCALE): lifecycles started against them run on it and report real units. */
export const simClock = () => clockOf(timeScale());

/** Short durations for tests; SIM_TIME_SCALE=0.01 makes a 100 s simulated proof take 1 s. */
export function fastRequest(offerId: number, over: Partial<LifecycleRequest> = {}): LifecycleRequest {
  return {
    offerId,
    // A lenient bar in real proofs/h (a 400 s-proof host makes 18): tests that judge the bar set their own.
    minRate: 1,
    benchmarkProofs: 4,
    clock: simClock(),
    ...over,
    // Tests that time a fault against the batch need the whole batch; early promote is asked for by name.
    verdicts: { earlyPromote: false, ...over.verdicts },
    // Short fitness probes. A download sample here is bound by this machine's CPU (26-66 Mb/s measured with
    // the two cores busy), not by the simulated link: the floor is lowered to judge only slow links.
    fitness: { downloadSampleMiB: 8, probeSec: 3, minDownloadMbps: 4, ...over.fitness },
    timeouts: {
      waitRunningSec: 20,
      hostConnectSec: 30,
      paramfetchSec: 30,
      // A paramfetch process takes 3-6 s to print its first line with the two cores busy (tsx startup).
      paramfetchStallSec: 10,
      daemonReadySec: 10,
      proofDeadlineSec: 20,
      benchmarkSec: 40,
      heartbeatSec: 5,
      ...over.timeouts,
    },
  };
}
