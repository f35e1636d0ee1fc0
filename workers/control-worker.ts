import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime } from '@temporalio/worker';
import { migrate } from '../infra/sql/migrate.js';
import { createPool } from '../activities/store/pool.js';
import { ControlConfigSchema, loadConfig } from './setup/config.js';
import { installRuntime } from './setup/runtime.js';
import { connectionOptions, dataConverter } from './setup/temporal-connection.js';
import { createControlWorker } from './setup/control-worker-factory.js';
import { startFleetCollector } from './setup/fleet-collector.js';
import { fleetRegistry } from './setup/metrics-registry.js';

async function main(): Promise<void> {
  const cfg = loadConfig(ControlConfigSchema);
  const metrics = await installRuntime({ metricsBind: cfg.METRICS_BIND, registry: fleetRegistry().registry });
  const pool = createPool(cfg.DATABASE_URL);
  await migrate(pool);
  const connection = await NativeConnection.connect(connectionOptions(cfg.TEMPORAL_ADDRESS, cfg));
  const clientConnection = await Connection.connect(connectionOptions(cfg.TEMPORAL_ADDRESS, cfg));
  try {
    const client = new Client({
      connection: clientConnection,
      namespace: cfg.TEMPORAL_NAMESPACE,
      dataConverter: dataConverter(cfg),
    });
    const worker = await createControlWorker(cfg, pool, { connection, client });
    const collector = cfg.METRICS_BIND
      ? startFleetCollector({
          pool,
          client,
          intervalMs: cfg.FLEET_METRICS_INTERVAL_MS,
          onError: (err) => Runtime.instance().logger.warn('fleet metrics: store read failed', { error: String(err) }),
        })
      : null;
    try {
      await worker.run();
    } finally {
      collector?.stop();
      await metrics?.close();
    }
  } finally {
    await clientConnection.close();
    await connection.close();
    await pool.end();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
