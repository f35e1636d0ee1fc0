import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { simFitnessEnv } from '../host-tools/env.js';
import { SIM_C1_JSON } from '../net.js';
import { hostPorts, portReserver } from '../ports.js';
import { type SimOffer, timeScale } from '../scenario.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const tsNode = (script: string) => [process.execPath, '--import', 'tsx', path.join(ROOT, script)];

export interface BootedHost {
  workDir: string;
  /** False once the process group was sent SIGKILL, which cannot be caught. */
  readonly alive: boolean;
  kill(): void;
}

/** The production heartbeat gap (20 s) in compressed time, floored so a loaded machine keeps up. */
export const heartbeatThrottleSec = (scale: number) => Math.max(2, 20 * scale);

/** How the simulator brings up a rented machine: a process per host (below) or the host farm. */
export type HostBooter = (
  offer: SimOffer,
  instanceId: number,
  env: Record<string, string>,
  baseDir: string,
  onExit: (code: number | null, signal: string | null) => void,
) => Promise<BootedHost>;

/** A rented machine's disk: work dir, empty parameter cache, and the C1 input its benchmark proves (if its image has it). */
export function prepareHostDir(baseDir: string, instanceId: number, offer: SimOffer) {
  const workDir = path.join(baseDir, `instance-${instanceId}`);
  const paramCache = path.join(workDir, 'params');
  mkdirSync(paramCache, { recursive: true });
  const c1Path = path.join(workDir, 'c1.json');
  if (offer.sim.host.machine.c1 !== 'absent') writeFileSync(c1Path, SIM_C1_JSON);
  return { workDir, paramCache, c1Path };
}

let reserveDaemonPort: (() => Promise<number>) | undefined;

/** A port for a host's daemon, below the ephemeral range (../ports.ts); from a random start, so two runs at once rarely meet. */
function daemonPort(): Promise<number> {
  if (!reserveDaemonPort) {
    const { base, span } = hostPorts();
    reserveDaemonPort = portReserver(base, span, base + Math.floor(Math.random() * span));
  }
  return reserveDaemonPort();
}

/**
 * "Boots" a rented machine: runs the real GPU-host worker with the instance's env (as the image's
 * entrypoint would), pointed at the simulated daemon and paramfetch for this offer's scenario.
 */
export async function bootHost(
  offer: SimOffer,
  instanceId: number,
  env: Record<string, string>,
  baseDir: string,
  onExit: (code: number | null, signal: string | null) => void,
): Promise<BootedHost> {
  const { workDir, paramCache, c1Path } = prepareHostDir(baseDir, instanceId, offer);
  const port = await daemonPort();
  const fitness = await simFitnessEnv(offer);
  const child = spawn(
    tsNode('workers/gpu-host-worker.ts')[0] as string,
    tsNode('workers/gpu-host-worker.ts').slice(1),
    {
      cwd: ROOT,
      // Own process group, so destroying the instance takes the worker and its daemon down together.
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        SIM_TIME_SCALE: process.env.SIM_TIME_SCALE ?? '1',
        HEARTBEAT_THROTTLE_SEC: String(heartbeatThrottleSec(timeScale())),
        ...env,
        CUZK_ADDRESS: `127.0.0.1:${port}`,
        CUZK_DAEMON_CMD: JSON.stringify(tsNode('infra/sim/cuzk/main.ts')),
        PARAMFETCH_CMD: JSON.stringify(tsNode('infra/sim/paramfetch.ts')),
        PRODUCTION_CMD: JSON.stringify(tsNode('infra/sim/curio-feeder.ts')),
        PARAM_CACHE_DIR: paramCache,
        WORK_DIR: workDir,
        C1_PATH: c1Path,
        MINER_ID: '1000',
        SIM_HOST_SCENARIO: JSON.stringify(offer.sim.host),
        SIM_GPU_NAME: offer.gpu_name,
        SIM_NUM_GPUS: String(offer.num_gpus),
        ...fitness,
      },
    },
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  child.once('exit', (code, signal) => {
    if (code) writeFileSync(path.join(workDir, 'worker-exit.log'), stderr);
    onExit(code, signal);
  });
  let killed = false;
  return {
    workDir,
    get alive() {
      return !killed && child.exitCode === null && child.signalCode === null;
    },
    kill() {
      // Once: a later kill of a long-gone group could hit an unrelated one that reused its id.
      if (killed) return;
      killed = true;
      // The whole group even when the worker itself is gone: destroying an instance ends its container,
      // and a daemon orphaned by a crashed worker is still in the group, still proving.
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    },
  };
}
