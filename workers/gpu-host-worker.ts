import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createGpuHostActivities } from '../activities/gpu-host/activities.js';
import { DaemonSupervisor } from '../activities/gpu-host/daemon.js';
import { ProductionRunner } from '../activities/gpu-host/production.js';
import { GpuHostConfigSchema, loadConfig } from './config.js';
import { installRuntime } from './runtime.js';
import { connectionOptions, dataConverter } from './temporal-connection.js';

/** Runs on the rented machine: polls only its own queue and drives the local cuzk-daemon. */
async function main(): Promise<void> {
  const cfg = loadConfig(GpuHostConfigSchema);
  installRuntime({ metricsBind: cfg.METRICS_BIND, logLevel: 'WARN' });
  await mkdir(cfg.WORK_DIR, { recursive: true });
  const supervisor = new DaemonSupervisor({
    command: cfg.CUZK_DAEMON_CMD,
    listenAddress: cfg.CUZK_ADDRESS,
    workDir: cfg.WORK_DIR,
    paramCacheDir: cfg.PARAM_CACHE_DIR,
  });
  const production = new ProductionRunner(cfg.PRODUCTION_CMD, path.join(cfg.WORK_DIR, 'production.log'));
  const connection = await NativeConnection.connect(connectionOptions(cfg.TEMPORAL_ADDRESS, cfg));
  const worker = await Worker.create({
    connection,
    namespace: cfg.TEMPORAL_NAMESPACE,
    taskQueue: cfg.HOST_TASK_QUEUE,
    dataConverter: dataConverter(cfg),
    activities: createGpuHostActivities({
      supervisor,
      production,
      cuzkAddress: cfg.CUZK_ADDRESS,
      paramfetchCommand: cfg.PARAMFETCH_CMD,
      c1Path: cfg.C1_PATH,
      minerId: cfg.MINER_ID,
      workDir: cfg.WORK_DIR,
    }),
    // Activity cancellation reaches us only through heartbeats; flush them often enough for the timer race.
    maxHeartbeatThrottleInterval: '2 seconds',
  });
  try {
    await worker.run();
  } finally {
    production.stop();
    await supervisor.stop();
    await connection.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
