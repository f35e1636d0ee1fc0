import net from 'node:net';
import { z } from 'zod';
import { loadConfig } from '../../workers/setup/config.js';

/**
 * Daemon ports for the hosts the Vast simulator boots as processes (vast/host-boot.ts). A simulated
 * daemon binds its port long after the port is chosen: after the host's fitness gate and paramfetch,
 * and again after each restart. A port from the kernel's ephemeral range (32768 up) can be taken
 * meanwhile by any outgoing connection on the machine, and the daemon then fails to bind: a host
 * failure no real host has. So these come from just below that range, clear of the host farm's
 * (SIM_FARM_PORT_BASE, 21000-30999) and the engine tests' servers (12000-19999).
 */
const HostPortsSchema = z
  .object({
    SIM_HOST_PORT_BASE: z.coerce.number().int().min(1024).max(65_000).default(31_000),
    SIM_HOST_PORT_SPAN: z.coerce.number().int().min(1).max(10_000).default(1_700),
  })
  .refine((c) => c.SIM_HOST_PORT_BASE + c.SIM_HOST_PORT_SPAN <= 65_536, {
    message: 'SIM_HOST_PORT_BASE + SIM_HOST_PORT_SPAN must not pass 65536',
    path: ['SIM_HOST_PORT_SPAN'],
  });

export function hostPorts(env: NodeJS.ProcessEnv = process.env): { base: number; span: number } {
  const c = loadConfig(HostPortsSchema, env);
  return { base: c.SIM_HOST_PORT_BASE, span: c.SIM_HOST_PORT_SPAN };
}

/**
 * Hands out the ports base..base+span-1 in turn, from `start`, each checked free when handed out. In
 * turn, so a port handed out but not yet bound is not handed out again before the range comes round.
 */
export function portReserver(
  base: number,
  span: number,
  start = base,
  isFree: (port: number) => Promise<boolean> = canListen,
): () => Promise<number> {
  let next = start;
  return async () => {
    for (let tries = 0; tries < span; tries++) {
      const port = next;
      next = next + 1 >= base + span ? base : next + 1;
      if (await isFree(port)) return port;
    }
    throw new Error(`no free TCP port in ${base}..${base + span - 1}`);
  };
}

export function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}
