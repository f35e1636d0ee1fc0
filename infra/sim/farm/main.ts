import os from 'node:os';
import path from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { z } from 'zod';
import { timeScale } from '../scenario.js';
import { startHostFarm } from './farm.js';
import { startSpawner } from './spawner-client.js';

/**
 * The host farm as its own process (so a scale run measures the control worker apart from the
 * simulated machines). Prints `FARM_URL=<url>` once listening; stops on SIGTERM.
 */
Runtime.install({ logger: new DefaultLogger('ERROR') });
// Started first, while this process is small; hosts' processes fork from it, not from the farm.
const spawner = startSpawner();
const farm = await startHostFarm({
  spawn: spawner.spawn,
  baseDir: process.env.SIM_FARM_BASE_DIR ?? path.join(os.tmpdir(), `host-farm-${process.pid}`),
  scale: timeScale(),
  ...(process.env.SIM_HEARTBEAT_THROTTLE_SEC
    ? { heartbeatThrottleSec: z.coerce.number().positive().parse(process.env.SIM_HEARTBEAT_THROTTLE_SEC) }
    : {}),
});
console.log(`FARM_URL=${farm.url}`);
process.on('SIGTERM', () => {
  void farm.close().finally(() => {
    spawner.stop();
    process.exit(0);
  });
});
