import { z } from 'zod';

/**
 * Daemon ports a host farm hands out. Farms only check a port when they hand it out (the daemon
 * binds it later), so two simulated fleets at once on one machine need distinct bases or their
 * hosts reach each other's daemons.
 */
const PortBase = z.coerce.number().int().min(1024).max(55_535);
const PortSpan = z.coerce.number().int().min(1).max(10_000);

function read(name: string, schema: z.ZodType<number>, fallback: number, range: string): number {
  const raw = process.env[name] ?? String(fallback);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new Error(`${name}: ${range}, got ${JSON.stringify(raw)}`);
  return parsed.data;
}

/** First of the (up to) 10,000 ports the simulated daemons take: SIM_FARM_PORT_BASE, default 21000. */
export function farmPortBase(): number {
  return read('SIM_FARM_PORT_BASE', PortBase, 21_000, 'an integer from 1024 to 55535');
}

/** How many ports one farm process (shard) may use: SIM_FARM_PORT_SPAN, default 10000. */
export function farmPortSpan(): number {
  return read('SIM_FARM_PORT_SPAN', PortSpan, 10_000, 'an integer from 1 to 10000');
}
