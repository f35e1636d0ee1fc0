import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type pg from 'pg';
import { createPool } from '../../activities/store/pool.js';
import { startEmbeddedPostgres } from '../db/embedded-postgres.js';
import type { SimOffer } from '../sim/scenario.js';
import type { HostBooter } from '../sim/vast/host-boot.js';
import { startVastSim, type VastSim } from '../sim/vast/server.js';
import { migrate } from '../sql/migrate.js';
import { type DevServer, type DevServerOptions, startDevServer } from '../temporal/dev-server.js';
import { createControlWorker } from '../../workers/setup/control-worker-factory.js';
import { startFleetCollector } from '../../workers/setup/fleet-collector.js';
import { fleetRegistry } from '../../workers/setup/metrics-registry.js';
import { serveMetrics } from '../../workers/setup/metrics-server.js';
import { DEFAULT_TIMEOUTS, DEFAULT_WATCH } from '../../workflows/domain/policy/defaults.js';

export interface SimStack {
  temporal: DevServer;
  client: Client;
  pool: pg.Pool;
  vast: VastSim;
  databaseUrl: string;
  embeddedDb: boolean;
  /** The control worker's /metrics, as production serves it; null without `metrics`. */
  metricsUrl: string | null;
  close(): Promise<void>;
}

/**
 * The whole simulated fleet in one call — Temporal dev server, Postgres (embedded unless
 * DATABASE_URL is set), the Vast.ai simulator and the production control worker — for the demo
 * and the benchmark harness.
 */
export async function startSimStack(
  offers: SimOffer[],
  server: DevServerOptions,
  log: (m: string) => void,
  opts: {
    bootHost?: HostBooter;
    /** Serve /metrics at `bind` (port 0: a free one), with the SDK's exporter at `sdkUrl` appended. */
    metrics?: { bind: string; sdkUrl?: string };
  } = {},
): Promise<SimStack> {
  log('starting Temporal dev server (first run builds the CLI from the Go module proxy)…');
  const temporal = await startDevServer(server);
  log(`Temporal ${temporal.address}, web UI ${temporal.uiUrl ?? '(none)'}`);
  const embedded = process.env.DATABASE_URL ? null : await startEmbeddedPostgres();
  const databaseUrl = process.env.DATABASE_URL ?? embedded?.url ?? '';
  log(embedded ? `embedded Postgres (PGlite) at ${embedded.url}` : 'Postgres from DATABASE_URL');
  const pool = createPool(databaseUrl, embedded ? 4 : 10);
  await migrate(pool);
  // The simulator's key is random per run: it stands in for VAST_API_KEY and never enters workflow input.
  const apiKey = process.env.VAST_API_KEY ?? `sim-${Math.random().toString(36).slice(2)}`;
  const vast = await startVastSim({ offers, apiKey, ...(opts.bootHost ? { bootHost: opts.bootHost } : {}) });
  log(`simulated Vast.ai API at ${vast.url} with ${offers.length} offers`);
  const nativeConnection = await NativeConnection.connect({ address: temporal.address });
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection, namespace: temporal.namespace });
  const worker = await createControlWorker(
    {
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: temporal.namespace,
      DATABASE_URL: databaseUrl,
      VAST_API_URL: vast.url,
      VAST_API_KEY: apiKey,
      HOST_TEMPORAL_ADDRESS: temporal.address,
      VAST_POLL_INTERVAL_MS: 250,
    },
    pool,
    { connection: nativeConnection, client },
  );
  const workerRun = worker.run();
  // The production wiring (workers/control-worker.ts): the store's totals on a cadence, one /metrics.
  const collector = opts.metrics ? startFleetCollector({ pool, client, intervalMs: 2000 }) : null;
  const metrics = opts.metrics ? await serveMetrics({ ...opts.metrics, registry: fleetRegistry().registry }) : null;
  return {
    temporal,
    client,
    pool,
    vast,
    databaseUrl,
    embeddedDb: embedded !== null,
    metricsUrl: metrics?.url ?? null,
    async close() {
      // Each step runs even if an earlier one fails, so a stop never leaves hosts or servers behind;
      // the worker may already be stopping (a signal reached the SDK first).
      const steps: Array<[string, () => Promise<unknown>]> = [
        ['simulated Vast and its hosts', () => vast.close()],
        ['metrics', async () => (collector?.stop(), await metrics?.close())],
        [
          'control worker',
          async () => {
            if (worker.getState() === 'RUNNING') worker.shutdown();
            await workerRun;
          },
        ],
        ['client connection', () => connection.close()],
        ['worker connection', () => nativeConnection.close()],
        ['Postgres pool', () => pool.end()],
        ['embedded Postgres', async () => embedded?.stop()],
        ['Temporal dev server', () => temporal.stop()],
      ];
      for (const [what, step] of steps) {
        // Bounded: with the server already gone (a terminal's Ctrl-C reaches it too) a step may wait on it.
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('no answer within 10 s, moving on')), 10_000);
        });
        try {
          await Promise.race([step(), timeout]);
        } catch (err) {
          log(`stopping ${what}: ${err instanceof Error ? err.message : String(err)}`);
        } finally {
          clearTimeout(timer);
        }
      }
    },
  };
}

/**
 * The production durations (DEFAULT_TIMEOUTS, DEFAULT_WATCH) compressed by the simulators' factor;
 * windows that would shrink below a process start-up on a loaded 2-core machine keep a floor (seconds).
 * storeRetrySec is left at its default: it is the store's own retry, not a host's pace.
 */
export function compressedLifecycle(scale: number) {
  const t = DEFAULT_TIMEOUTS;
  const at = (sec: number, floorSec = 0) => Math.max(floorSec, sec * scale);
  return {
    timeouts: {
      waitRunningSec: at(t.waitRunningSec),
      hostConnectSec: at(t.hostConnectSec, 30),
      paramfetchSec: at(t.paramfetchSec),
      paramfetchStallSec: at(t.paramfetchStallSec, 20),
      daemonReadySec: at(t.daemonReadySec, 20),
      proofDeadlineSec: at(t.proofDeadlineSec, 20),
      benchmarkSec: at(t.benchmarkSec),
      // Three heartbeat gaps (heartbeatThrottleSec) per timeout, as in production (60 s / 20 s).
      heartbeatSec: at(t.heartbeatSec, 10),
    },
    watch: { intervalSec: at(DEFAULT_WATCH.intervalSec) },
  };
}
