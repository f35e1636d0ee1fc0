import { z } from 'zod';
import { loadConfig } from '../../../workers/setup/config.js';

/**
 * Daemon ports a host farm hands out. Farms only check a port when they hand it out (the daemon
 * binds it later), so two simulated fleets at once on one machine need distinct bases or their
 * hosts reach each other's daemons.
 */
const FarmPortsSchema = z.object({
  SIM_FARM_PORT_BASE: z.coerce.number().int().min(1024).max(55_535).default(21_000),
  /** Ports one farm process may use; `spawnHostFarms` splits it between its shards. */
  SIM_FARM_PORT_SPAN: z.coerce.number().int().min(1).max(10_000).default(10_000),
});

export function farmPorts(env: NodeJS.ProcessEnv = process.env): { base: number; span: number } {
  const c = loadConfig(FarmPortsSchema, env);
  return { base: c.SIM_FARM_PORT_BASE, span: c.SIM_FARM_PORT_SPAN };
}
