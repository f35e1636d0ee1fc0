import { z } from 'zod';
import { realSec } from '../../workflows/domain/policy/clock.js';

/**
 * The simulators compress time by SIM_TIME_SCALE (0.01 = 100x faster). Lifecycles take the factor as
 * input and report in real units themselves (workflows/domain/policy/clock.ts); this CLI needs it only to give
 * the lifecycles it starts (deploy, schedule setup) and to show ages it reads off wall clocks in real time.
 */
const ScaleSchema = z.coerce.number().gt(0).max(1);

export function timeScale(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SIM_TIME_SCALE;
  if (raw === undefined || raw === '') return 1;
  const r = ScaleSchema.safeParse(raw);
  if (!r.success) throw new Error(`SIM_TIME_SCALE must be a number in (0, 1], got '${raw}'`);
  return r.data;
}

/** Real seconds for a span the CLI measured on the wall clock, which the simulators' hosts share. */
export function realAgeSec(wallMs: number, scale = timeScale()): number {
  return realSec(wallMs, scale);
}
