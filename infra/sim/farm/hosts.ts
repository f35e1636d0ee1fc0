import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { GpuHostConfigSchema, loadConfig } from '../../../workers/setup/config.js';
import { createGpuHost } from '../../../workers/setup/gpu-host-factory.js';
import { simFitnessEnv } from '../host-tools/env.js';
import { scaledMs, SimOfferSchema } from '../scenario.js';
import { prepareHostDir } from '../vast/host-boot.js';
import { connect, type FarmHost, type FarmState, killQuietly } from './state.js';

const STANDIN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'standin.sh');

export const BootSchema = z.object({
  instanceId: z.number().int().positive(),
  offer: SimOfferSchema,
  env: z.record(z.string(), z.string()),
});

/** A rented machine comes up: its disk, and the production GPU-host worker whose processes are stand-ins. */
export async function boot(st: FarmState, req: z.infer<typeof BootSchema>): Promise<string> {
  const { instanceId, offer, env } = req;
  const { workDir, paramCache, c1Path } = prepareHostDir(st.baseDir, instanceId, offer);
  const sc = offer.sim.host;
  const cfg = loadConfig(GpuHostConfigSchema, {
    ...env,
    ...(await simFitnessEnv(offer)),
    CUZK_ADDRESS: `127.0.0.1:${await st.reservePort()}`,
    CUZK_DAEMON_CMD: JSON.stringify(['bash', STANDIN, 'daemon']),
    PARAMFETCH_CMD: JSON.stringify([
      'bash',
      STANDIN,
      'paramfetch',
      paramCache,
      String(scaledMs(sc.paramfetchSec, st.scale) / 1000),
      sc.faults.paramfetch,
    ]),
    PRODUCTION_CMD: JSON.stringify(['bash', STANDIN, 'production', workDir]),
    PARAM_CACHE_DIR: paramCache,
    WORK_DIR: workDir,
    C1_PATH: c1Path,
    MINER_ID: '1000',
    HEARTBEAT_THROTTLE_SEC: String(st.throttleSec),
  });
  const host = await createGpuHost(cfg, await connect(st, cfg.TEMPORAL_ADDRESS), st.spawn);
  const run = host.worker.run().catch((err: unknown) => {
    console.error(`host ${instanceId}: worker stopped: ${err instanceof Error ? err.message : String(err)}`);
  });
  st.hosts.set(instanceId, { instanceId, offer, workDir, host, run });
  return workDir;
}

/** Destroyed at Vast: the machine's processes die at once and its worker stops polling. */
export async function powerOff(st: FarmState, instanceId: number): Promise<void> {
  const h = st.hosts.get(instanceId);
  if (!h) return;
  st.hosts.delete(instanceId);
  for (const s of st.standins.values()) if (s.hostId === instanceId) killQuietly(s.pid, 'SIGKILL');
  try {
    h.host.worker.shutdown();
  } catch {
    /* already stopped (it failed, and boot logged why) */
  }
  await h.run;
  await h.host.release();
}

/** The machine whose work dir holds this file. */
export function hostOf(st: FarmState, file: string): FarmHost | undefined {
  for (const h of st.hosts.values()) if (file.startsWith(h.workDir + path.sep)) return h;
  return undefined;
}
