import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
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
import { type SimOffer } from '../../infra/sim/scenario.js';
import { freePort } from '../../infra/temporal/dev-server.js';
import { startVastSim, type VastSim } from '../../infra/sim/vast/server.js';
import type { ControlConfig } from '../../workers/config.js';
import { createControlWorker, WORKFLOWS_PATH } from '../../workers/control-worker-factory.js';
import { createLogger } from '../../workers/logger.js';
import { prometheusOptions } from '../../workers/runtime.js';
import { dataConverter } from '../../workers/temporal-connection.js';
import type { LifecycleRequest } from '../../workflows/types.js';

let bundle: Promise<{ code: string }> | null = null;

/** Bundling takes seconds; do it once per test file. */
export function workflowBundle(): Promise<{ code: string }> {
  return (bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') }));
}

// Expected kills are logged by the SDK at WARN; tests log only errors so real failures stand out. That
// includes the native core's own logs (its gRPC retries while a fault test has the server down).
export const METRICS_URL = `http://127.0.0.1:${await freePort()}/metrics`;
// A test that reads the workers' JSON log lines names a file here before it imports this module.
const jsonLog = process.env.FLEET_ENV_JSON_LOG;
Runtime.install({
  logger: jsonLog ? createLogger('INFO', jsonLog) : new DefaultLogger('ERROR'),
  telemetryOptions: {
    logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} },
    // The production exporter's options, so tests see the metric names operators see.
    metrics: { prometheus: prometheusOptions(new URL(METRICS_URL).host) },
  },
});

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
    /** A test with a Postgres of its own (one it stops) passes its URL; others share the global one. */
    databaseUrl?: string;
  } = {},
): Promise<FleetEnv> {
  // A test with a Temporal server of its own (one it restarts) passes its address; others share the global one.
  const address = opts.temporalAddress ?? inject('temporalAddress');
  const sim = await startVastSim({ offers, apiKey: API_KEY });
  const databaseUrl = opts.databaseUrl ?? inject('databaseUrl');
  const pool = createPool(databaseUrl, 4);
  const nativeConnection = await NativeConnection.connect({ address });
  const taskQueue = `test-control-${randomUUID()}`;
  const connection = await Connection.connect({ address });
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

/** Short durations for tests; SIM_TIME_SCALE=0.01 makes a 100 s simulated proof take 1 s. */
export function fastRequest(offerId: number, over: Partial<LifecycleRequest> = {}): LifecycleRequest {
  return {
    offerId,
    minRate: 20,
    benchmarkProofs: 4,
    ...over,
    timeouts: {
      waitRunningSec: 20,
      hostConnectSec: 30,
      paramfetchSec: 30,
      paramfetchStallSec: 3,
      daemonReadySec: 10,
      proofDeadlineSec: 20,
      benchmarkSec: 40,
      heartbeatSec: 5,
      ...over.timeouts,
    },
  };
}
