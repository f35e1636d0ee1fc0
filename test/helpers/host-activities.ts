import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { vi } from 'vitest';
import { createGpuHostActivities } from '../../activities/gpu-host/activities.js';
import { DaemonSupervisor } from '../../activities/gpu-host/daemon.js';
import { ProductionRunner } from '../../activities/gpu-host/production.js';

/**
 * The GPU-host worker's activities over a daemon the test runs itself (at `address`), in-process: the
 * supervisor starts nothing (`true`) and its stop is a no-op, so the test's daemon answers throughout.
 * `dir` holds the C1 input (c1.json) and the parameter cache; `workDir` the supervisor's daemon log.
 */
export function hostActivitiesOver(address: string, dir: string, workDir = dir) {
  const supervisor = new DaemonSupervisor({ command: ['true'], listenAddress: address, workDir, paramCacheDir: dir });
  vi.spyOn(supervisor, 'stop').mockResolvedValue(undefined);
  const acts = createGpuHostActivities({
    supervisor,
    production: new ProductionRunner(['true'], path.join(dir, 'production.log')),
    cuzkAddress: address,
    paramfetchCommand: ['true'],
    c1Path: path.join(dir, 'c1.json'),
    minerId: 1000,
    workDir,
    // The fitness probes are not used through this helper.
    fitness: { nvidiaSmi: ['false'], diskFree: ['false'], diskWrite: ['false'], sampleUrl: null, paramCacheDir: dir },
  });
  return { acts, supervisor };
}

/** An activity context with a 60 s heartbeat timeout; the steps' expected failures are not logged. */
export const hostActivityEnv = () =>
  new MockActivityEnvironment({ heartbeatTimeoutMs: 60_000 }, { logger: new DefaultLogger('ERROR') });

/** The C1 input the proof steps read (its SectorNum must match the request's sector number). */
export const C1_INPUT = JSON.stringify({ SectorNum: 1, Phase1Out: 'AAAA', SectorSize: 34_359_738_368 });
