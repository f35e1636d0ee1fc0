import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { HostBooter } from '../vast/host-boot.js';
import { farmPorts } from './ports.js';

const BootedSchema = z.object({ workDir: z.string() });

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface FarmProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts the host farm as a child process and waits for its URL. */
export async function spawnHostFarm(env: Record<string, string> = {}): Promise<FarmProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'infra/sim/farm/main.ts')], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (l) => {
      const m = /^FARM_URL=(.+)$/.exec(l);
      if (m?.[1]) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`host farm exited with code ${code} before listening`)));
  });
  return {
    url,
    child,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/**
 * Several farm processes: one Node event loop (and one fork-heavy address space) per few hundred
 * machines, so a big fleet is not starved by a single simulator thread.
 */
export async function spawnHostFarms(shards: number, env: Record<string, string> = {}): Promise<FarmProcess[]> {
  const ports = farmPorts();
  const span = Math.floor(ports.span / shards);
  return Promise.all(
    Array.from({ length: shards }, (_, k) =>
      spawnHostFarm({ ...env, SIM_FARM_PORT_BASE: String(ports.base + k * span), SIM_FARM_PORT_SPAN: String(span) }),
    ),
  );
}

/** A HostBooter for the Vast simulator that brings machines up in the farm instead of as processes. */
export function farmBooter(farmUrls: string[]): HostBooter {
  return async (offer, instanceId, env) => {
    const farmUrl = farmUrls[instanceId % farmUrls.length]!;
    const res = await fetch(`${farmUrl}/hosts`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ instanceId, offer, env }),
    });
    if (!res.ok) throw new Error(`host farm refused instance ${instanceId}: ${res.status} ${await res.text()}`);
    const { workDir } = BootedSchema.parse(await res.json());
    let alive = true;
    return {
      workDir,
      get alive() {
        return alive;
      },
      kill() {
        if (!alive) return;
        alive = false;
        void fetch(`${farmUrl}/hosts/${instanceId}`, { method: 'DELETE' }).catch(() => undefined);
      },
    };
  };
}
