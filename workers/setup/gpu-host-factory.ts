import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type NativeConnection, Worker } from '@temporalio/worker';
import { createGpuHostActivities } from '../../activities/gpu-host/activities.js';
import { DaemonSupervisor } from '../../activities/gpu-host/daemon.js';
import { ProductionRunner } from '../../activities/gpu-host/production.js';
import type { SpawnHostProcess } from '../../activities/gpu-host/spawn.js';
import type { GpuHostConfig } from './config.js';
import { dataConverter } from './temporal-connection.js';

export interface GpuHost {
  worker: Worker;
  /** Stops the production prover and the daemon (after the worker has stopped). */
  release(): Promise<void>;
}

/** The worker of one rented machine: polls only its own queue and drives the local cuzk-daemon. */
export async function createGpuHost(
  cfg: GpuHostConfig,
  connection: NativeConnection,
  /** How the machine's processes are started (default: children of this process). */
  spawn?: SpawnHostProcess,
): Promise<GpuHost> {
  await mkdir(cfg.WORK_DIR, { recursive: true });
  const supervisor = new DaemonSupervisor({
    command: cfg.CUZK_DAEMON_CMD,
    listenAddress: cfg.CUZK_ADDRESS,
    workDir: cfg.WORK_DIR,
    paramCacheDir: cfg.PARAM_CACHE_DIR,
    spawn,
  });
  const production = new ProductionRunner(cfg.PRODUCTION_CMD, path.join(cfg.WORK_DIR, 'production.log'), spawn);
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
      spawn,
      c1Path: cfg.C1_PATH,
      minerId: cfg.MINER_ID,
      workDir: cfg.WORK_DIR,
      fitness: {
        nvidiaSmi: cfg.NVIDIA_SMI_CMD,
        diskFree: cfg.DISK_FREE_CMD,
        diskWrite: cfg.DISK_WRITE_CMD,
        sampleUrl: cfg.FITNESS_SAMPLE_URL ?? null,
        paramCacheDir: cfg.PARAM_CACHE_DIR,
      },
    }),
    // One machine runs a handful of activities at a time; one long poll each keeps a big fleet within
    // the server's per-namespace poll limit (it polls again as soon as it gets a task).
    maxConcurrentActivityTaskPolls: 1,
    // Activity cancellation reaches us only through heartbeats; flush them often enough for the timer race.
    maxHeartbeatThrottleInterval: cfg.HEARTBEAT_THROTTLE_SEC * 1000,
  });
  return {
    worker,
    async release() {
      production.stop();
      await supervisor.stop();
    },
  };
}
