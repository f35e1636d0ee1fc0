import { z } from 'zod';

/**
 * The simulators compress time by SIM_TIME_SCALE (0.01 = 100x faster): a simulated lifecycle's rates are
 * then 1/scale too high. When this process knows the factor, rates are converted here, at the edge, so
 * every rate the operator reads or types is in real proofs per hour.
 */
const ScaleSchema = z.coerce.number().gt(0).max(1);

export function timeScale(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SIM_TIME_SCALE;
  if (raw === undefined || raw === '') return 1;
  const r = ScaleSchema.safeParse(raw);
  if (!r.success) throw new Error(`SIM_TIME_SCALE must be a number in (0, 1], got '${raw}'`);
  return r.data;
}

/** A workflow's rate (proofs per workflow-hour) in real proofs per hour. */
export function realRate(workflowRate: number, scale = timeScale()): number {
  return workflowRate * scale;
}

/** A real rate the operator typed, in the units the workflows of this deployment measure. */
export function workflowRate(real: number, scale = timeScale()): number {
  return real / scale;
}

/** Rates inside text a workflow wrote ("12 proofs/h ..."), converted the same way. */
export function realRatesInText(text: string, scale = timeScale()): string {
  if (scale === 1) return text;
  return text.replace(
    /(\d+(?:\.\d+)?) proofs\/h/g,
    (_, n: string) => `${Math.round(Number(n) * scale * 10) / 10} proofs/h`,
  );
}
