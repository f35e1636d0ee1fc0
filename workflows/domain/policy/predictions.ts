import { classKey, hardwareClass, hasFigure, modelPrior, priorLogRate, scalingLogSd } from './rate-prior.js';

/** One machine's last benchmark, with the hardware it ran on (Vast units: RAM in MB). */
export interface PerfSample {
  machineId: number;
  gpuName: string;
  numGpus: number;
  cpuRamMb: number;
  /** Proofs/h it measured. */
  rate: number;
}

/** The hardware an offer lists. */
export interface OfferHardware {
  machineId: number;
  gpuName: string;
  numGpus: number;
  cpuRamMb: number;
}

/** What we expect an offer to prove, and how sure we are. */
export interface RatePrediction {
  /** Proofs/h, the median of what we expect. */
  rate: number;
  /** Sd of ln(rate) for what we do not know about this kind of host (shrinks with every benchmark of it). */
  logSd: number;
  /**
   * 'machine': its own last benchmark; 'class': hosts of its model, GPU count and RAM class; 'model': other
   * hosts of its model only; 'prior': the reference's figure for the model alone; 'unknown': a model with
   * no figure and no benchmark (the generic prior).
   */
  source: 'machine' | 'class' | 'model' | 'prior' | 'unknown';
  /** Benchmarks of its class behind the prediction. */
  samples: number;
}

/**
 * Spread of ln(rate) between hosts of one class: the demo's RTX 5070 Ti on 768 GB measured 85.3 proofs/h
 * where the reference's figure gives 95.5 (11 % apart); doubled, one pair being all there is.
 */
export const HOST_LOG_SD = 0.2;
/** A machine benchmarked again: the batch's own spread (the early-promote test's 0.05 floor on it). */
export const MACHINE_LOG_SD = 0.05;

interface Group {
  n: number;
  sum: number;
  numGpus: number;
}

/** Residuals ln(rate) - ln(prior) of a model's samples, grouped by class. */
function residualsByClass(samples: readonly PerfSample[], gpuName: string): Map<string, Group> {
  const groups = new Map<string, Group>();
  for (const s of samples) {
    if (s.gpuName !== gpuName || !(s.rate > 0)) continue;
    const key = classKey(hardwareClass(s.gpuName, s.numGpus, s.cpuRamMb));
    const g = groups.get(key) ?? { n: 0, sum: 0, numGpus: Math.max(1, s.numGpus) };
    g.n++;
    g.sum += Math.log(s.rate) - priorLogRate(s.gpuName, s.numGpus, s.cpuRamMb);
    groups.set(key, g);
  }
  return groups;
}

/**
 * Predicts an offer's proofs/h: its machine's own last benchmark first; else a normal model on ln(rate)
 * around the reference's prior, `ln rate = prior + model offset + class offset + host spread`. The model
 * offset is learnt from the model's other classes (each class's mean residual, weighted by how much it
 * says about the offset); the offer's own class then refines it with its benchmarks (conjugate update).
 * Deterministic: the same samples give the same prediction.
 */
export function predictRate(o: OfferHardware, samples: readonly PerfSample[]): RatePrediction {
  const own = samples.find((s) => s.machineId === o.machineId && s.rate > 0);
  if (own) return { rate: own.rate, logSd: MACHINE_LOG_SD, source: 'machine', samples: 1 };
  const key = classKey(hardwareClass(o.gpuName, o.numGpus, o.cpuRamMb));
  const groups = residualsByClass(samples, o.gpuName);
  const sigma2 = HOST_LOG_SD ** 2;
  // The model's offset from its other classes: prior N(0, tauM^2), each class mean ~ N(offset, tauC^2 + sigma^2/n).
  let precision = 1 / modelPrior(o.gpuName).logSd ** 2;
  let weighted = 0;
  for (const [k, g] of groups) {
    if (k === key) continue;
    const w = 1 / (scalingLogSd(g.numGpus) ** 2 + sigma2 / g.n);
    precision += w;
    weighted += (w * g.sum) / g.n;
  }
  const offsetMean = weighted / precision;
  const v0 = 1 / precision + scalingLogSd(o.numGpus) ** 2;
  const mine = groups.get(key);
  const n = mine?.n ?? 0;
  const v = 1 / (1 / v0 + n / sigma2);
  const mean = v * (offsetMean / v0 + (mine?.sum ?? 0) / sigma2);
  const others = [...groups.keys()].some((k) => k !== key);
  return {
    rate: Math.exp(priorLogRate(o.gpuName, o.numGpus, o.cpuRamMb) + mean),
    logSd: Math.sqrt(v),
    source: n > 0 ? 'class' : others ? 'model' : hasFigure(o.gpuName) ? 'prior' : 'unknown',
    samples: n,
  };
}

/** The rate at `z` standard deviations of what we do not know (z = 1: the upper 84 % bound). */
export function rateAt(p: RatePrediction, z: number): number {
  return p.rate * Math.exp(z * p.logSd);
}
