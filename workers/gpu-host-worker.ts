import { NativeConnection } from '@temporalio/worker';
import { GpuHostConfigSchema, loadConfig } from './setup/config.js';
import { createGpuHost } from './setup/gpu-host-factory.js';
import { installRuntime } from './setup/runtime.js';
import { connectionOptions } from './setup/temporal-connection.js';

/** Runs on the rented machine: polls only its own queue and drives the local cuzk-daemon. */
async function main(): Promise<void> {
  const cfg = loadConfig(GpuHostConfigSchema);
  await installRuntime({ metricsBind: cfg.METRICS_BIND, logLevel: 'WARN' });
  const connection = await NativeConnection.connect(connectionOptions(cfg.TEMPORAL_ADDRESS, cfg));
  const host = await createGpuHost(cfg, connection);
  try {
    await host.worker.run();
  } finally {
    await host.release();
    await connection.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
