import { fileURLToPath } from 'node:url';
import type { NativeConnection } from '@temporalio/worker';
import { Worker } from '@temporalio/worker';
import type pg from 'pg';
import type { Client } from '@temporalio/client';
import { createStoreActivities } from '../activities/store/activities.js';
import { createTemporalActivities } from '../activities/temporal/activities.js';
import { VastClient } from '../activities/vast/client.js';
import { createVastActivities } from '../activities/vast/activities.js';
import { CONTROL_TASK_QUEUE } from '../workflows/task-queues.js';
import type { ControlConfig } from './config.js';
import { dataConverter } from './temporal-connection.js';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/** Builds the control worker; the demo and tests use this too, so they run the production wiring. */
export async function createControlWorker(
  cfg: ControlConfig,
  pool: pg.Pool,
  opts: { connection: NativeConnection; client: Client; taskQueue?: string; workflowBundle?: { code: string } },
): Promise<Worker> {
  const vast = new VastClient({
    baseUrl: cfg.VAST_API_URL,
    apiKey: cfg.VAST_API_KEY,
    requestTimeoutMs: cfg.VAST_REQUEST_TIMEOUT_MS ?? 30_000,
  });
  // Only what the host's own worker needs to poll its queue: no Vast key, no database, no admin rights.
  const hostEnv: Record<string, string> = {
    TEMPORAL_ADDRESS: cfg.HOST_TEMPORAL_ADDRESS ?? cfg.TEMPORAL_ADDRESS,
    TEMPORAL_NAMESPACE: cfg.TEMPORAL_NAMESPACE,
    ...(cfg.HOST_TEMPORAL_API_KEY ? { TEMPORAL_API_KEY: cfg.HOST_TEMPORAL_API_KEY } : {}),
    ...(cfg.HOST_PAYLOAD_KEYS ? { PAYLOAD_KEYS: cfg.HOST_PAYLOAD_KEYS } : {}),
    ...(cfg.HOST_PAYLOAD_KEY_ID ? { PAYLOAD_KEY_ID: cfg.HOST_PAYLOAD_KEY_ID } : {}),
  };
  return Worker.create({
    connection: opts.connection,
    dataConverter: dataConverter(cfg),
    namespace: cfg.TEMPORAL_NAMESPACE,
    taskQueue: opts.taskQueue ?? cfg.CONTROL_TASK_QUEUE ?? CONTROL_TASK_QUEUE,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    activities: {
      ...createVastActivities({ vast, hostEnv, pollIntervalMs: cfg.VAST_POLL_INTERVAL_MS }),
      ...createStoreActivities({ pool }),
      ...createTemporalActivities({ client: opts.client }),
    },
  });
}
