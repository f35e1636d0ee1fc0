/**
 * What we expect a host to prove before any benchmark of its kind: a prior on its proofs/h, log-normal,
 * from the cuzk reference's published figures. Proof synthesis is RAM-bound, so the prior depends on the
 * GPU model, the GPU count and the host's RAM, not on the GPU model alone.
 */

/** RAM classes of the reference's figures (GiB): a host is in the largest class its RAM reaches. */
export type RamClass = '128' | '256' | '512';

/**
 * Slowdown per proof by RAM class: the cuzk reference's RTX 5070 Ti figures, 37.7 s per 32 GiB PoRep C2 on
 * a host with 512-768 GiB, 53 s with 256 GiB (x1.4) and 152 s with 128 GiB (x4), memory-bound.
 */
export const RAM_SLOWDOWN: Readonly<Record<RamClass, number>> = { '512': 1, '256': 53 / 37.7, '128': 152 / 37.7 };

/** The class of `ramGiB`: 512 from 448 GiB (Vast lists 504 GB hosts), 256 from 224 GiB (251 GB), else 128. */
export function ramClassOf(ramGiB: number): RamClass {
  if (ramGiB >= 448) return '512';
  if (ramGiB >= 224) return '256';
  return '128';
}

export interface ModelPrior {
  /** Proofs/h of one GPU of the model on a host of the 512 GiB class. */
  ratePerGpu: number;
  /** Standard deviation of ln(rate) around it: how far the figure may be from our hosts' throughput. */
  logSd: number;
  source: string;
}

/**
 * Per GPU model. A figure measured with cuzk on a host is trusted more (sd 0.3) than a SupraSeal or
 * pre-cuzk latency (sd 0.5: cuzk pipelines proofs, so a host's throughput may be well above 3600 / latency).
 */
export const MODEL_PRIORS: Readonly<Record<string, ModelPrior>> = {
  'RTX 5070 Ti': {
    ratePerGpu: 3600 / 37.7,
    logSd: 0.3,
    source: 'cuzk reference: 37.7 s per 32 GiB PoRep C2 with cuzk, RTX 5070 Ti host of 512-768 GiB',
  },
  'RTX 3090': {
    ratePerGpu: 3600 / 138,
    logSd: 0.5,
    source: 'cuzk reference: SupraSeal C2 138 s on an RTX 3090 (a latency, not cuzk throughput)',
  },
  'RTX 4090': {
    ratePerGpu: 3600 / 143,
    logSd: 0.5,
    source: 'cuzk reference: SupraSeal C2 143 s on an RTX 4090 (a latency, not cuzk throughput)',
  },
  A40: {
    ratePerGpu: 35.9 / 2,
    logSd: 0.5,
    source: 'operating history: a 2x A40 host on 2 TB measured 35.9 proofs/h (one host)',
  },
};

/**
 * A model without a published figure: the reference's own rating of an instance, "good >= 40 proofs/h,
 * ok >= 25", taken as the middle of what a GPU does, with a wide spread (a factor of e ~ 2.7 either way).
 */
export const UNKNOWN_MODEL_PRIOR: ModelPrior = {
  ratePerGpu: 40,
  logSd: 1,
  source: 'cuzk reference: an instance rated good at >= 40 proofs/h, ok at >= 25 (no figure for the model)',
};

/**
 * How far the scaling from one GPU on a big host to this host's GPUs and RAM may be off (sd of ln):
 * the RAM figures are for one GPU, so one-GPU hosts get 0.3, hosts with more GPUs 0.5.
 */
export function scalingLogSd(numGpus: number): number {
  return numGpus <= 1 ? 0.3 : 0.5;
}

export interface HardwareClass {
  gpuName: string;
  numGpus: number;
  ramClass: RamClass;
}

export function hardwareClass(gpuName: string, numGpus: number, cpuRamMb: number): HardwareClass {
  return { gpuName, numGpus: Math.max(1, numGpus), ramClass: ramClassOf(cpuRamMb / 1024) };
}

export const classKey = (c: HardwareClass): string => `${c.gpuName}/${c.numGpus}/${c.ramClass}`;

/**
 * ln(prior proofs/h) of a host: each GPU gets an equal share of the host's RAM and proves at the model's
 * rate slowed by that share's RAM class (the reference's figures are one GPU per host), so a 2x GPU host
 * of 251 GB counts two GPUs of the 128 GiB class.
 */
export function priorLogRate(gpuName: string, numGpus: number, cpuRamMb: number): number {
  const gpus = Math.max(1, numGpus);
  const share = ramClassOf(cpuRamMb / 1024 / gpus);
  return Math.log((modelPrior(gpuName).ratePerGpu * gpus) / RAM_SLOWDOWN[share]);
}

/** The model's own prior (sd of ln, source), for every class of the model. */
export function modelPrior(gpuName: string): ModelPrior {
  return MODEL_PRIORS[gpuName] ?? UNKNOWN_MODEL_PRIOR;
}

/** Whether the reference publishes a figure for the model (else its prior is the generic one). */
export const hasFigure = (gpuName: string): boolean => MODEL_PRIORS[gpuName] !== undefined;
