import type { NativeConnection } from '@temporalio/worker';
import { Worker } from '@temporalio/worker';
import type pg from 'pg';
import type { Client } from '@temporalio/client';
import { createNotifyActivities } from '../../activities/notify/activities.js';
import { createStoreActivities } from '../../activities/store/activities.js';
import { createTemporalActivities } from '../../activities/temporal/activities.js';
import { VastClient } from '../../activities/vast/client.js';
import { createVastActivities } from '../../activities/vast/activities.js';
import { CONTROL_TASK_QUEUE } from '../../workflows/domain/task-queues.js';
import { checkHostEnv, type ControlConfig, hostEnvFromConfig, hostTokenFromConfig } from './config.js';
import { type FleetRegistry, fleetMetricsSinks } from './metrics-registry.js';
import { dataConverter } from './temporal-connection.js';
import { quietWorkflowSource } from './workflow-source.js';

/** Builds the control worker; the demo and tests use this too, so they run the production wiring. */
export async function createControlWorker(
  cfg: ControlConfig,
  pool: pg.Pool,
  opts: {
    connection: NativeConnection;
    client: Client;
    taskQueue?: string;
    workflowBundle?: { code: string };
    /** Where the workflows' fleet metrics go (default: this process's registry, served at its /metrics). */
    fleetMetrics?: FleetRegistry;
  },
): Promise<Worker> {
  const vast = new VastClient({
    baseUrl: cfg.VAST_API_URL,
    apiKey: cfg.VAST_API_KEY,
    requestTimeoutMs: cfg.VAST_REQUEST_TIMEOUT_MS ?? 30_000,
  });
  // Only what the host's own worker needs to poll its queue: no Vast key, no database, no admin rights.
  const hostEnv = hostEnvFromConfig(cfg);
  // Vast would refuse every create with an over-long env entry: refuse to start instead, naming it.
  checkHostEnv(hostEnv);
  // With our server build: a token per rental, reaching only that rental's queue (docs/security.md).
  const hostToken = hostTokenFromConfig(cfg);
  return Worker.create({
    connection: opts.connection,
    dataConverter: dataConverter(cfg),
    namespace: cfg.TEMPORAL_NAMESPACE,
    taskQueue: opts.taskQueue ?? cfg.CONTROL_TASK_QUEUE ?? CONTROL_TASK_QUEUE,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : await quietWorkflowSource()),
    sinks: fleetMetricsSinks(opts.fleetMetrics),
    activities: {
      ...createVastActivities({
        vast,
        hostEnv,
        ...(hostToken ? { hostToken } : {}),
        pollIntervalMs: cfg.VAST_POLL_INTERVAL_MS,
      }),
      ...createStoreActivities({ pool }),
      ...createTemporalActivities({ client: opts.client }),
      ...createNotifyActivities({ url: cfg.NOTIFY_WEBHOOK_URL, secret: cfg.NOTIFY_WEBHOOK_SECRET }),
    },
  });
}
