import { z } from 'zod';

/**
 * What a host must show in the seconds after it connects, before we pay for ~4 minutes of parameter
 * fetch. Defaults come from /work/shared/reference (cuzk.md, vast-api.md) as noted per field.
 */
export const FitnessPolicySchema = z.object({
  /** Off: skip the gate (the lifecycle goes straight to paramfetch, as before). */
  enabled: z.boolean().default(true),
  /**
   * GiB free on the parameter cache's filesystem. cuzk.md: all 32 GiB parameters are ~134 GiB and the
   * PCE file ~25 GiB, plus 1 GiB of work files and the ~50 MB C1 input.
   */
  minFreeDiskGiB: z.number().positive().default(160),
  /**
   * MB/s of sustained disk writes (fsync'd). Our floor, not the reference's: the parameters arrive at
   * the download floor's 40 MB/s (320 Mb/s), so a disk slower than that would make paramfetch disk-bound.
   */
  minDiskWriteMBps: z.number().positive().default(50),
  /**
   * Mb/s of download (Vast quotes inet_down in Mb/s, vast-api.md). ~134 GiB of parameters (cuzk.md)
   * within the default 60-minute paramfetch deadline needs 134 × 8 × 1.0737 Gb / 3600 s ≈ 320 Mb/s.
   */
  minDownloadMbps: z.number().positive().default(320),
  /** Lowest CUDA version the driver must report (nvidia-smi's "CUDA Version"); cuzk builds on CUDA 12. */
  minCudaVersion: z.number().positive().default(12),
  /** nvidia-smi's memory.total (MiB) may fall short of the offer's gpu_ram (MB) by this fraction. */
  vramTolerance: z.number().min(0).max(0.5).default(0.05),
  /** MiB written by the disk-speed probe (enough to get past the page cache's first burst when fsync'd). */
  diskProbeMiB: z.number().int().positive().max(4096).default(256),
  /** MiB downloaded by the network probe, or fewer when `probeSec` runs out first. */
  downloadSampleMiB: z.number().int().positive().max(4096).default(64),
  /** Seconds each timed probe may take before it is cut short and judged on what it did. */
  probeSec: z.number().positive().max(600).default(10),
});
export type FitnessPolicy = z.infer<typeof FitnessPolicySchema>;
export type FitnessRequest = z.input<typeof FitnessPolicySchema>;

/** Where the benchmark's C1 input comes from when the image does not carry it (docs/operating.md). */
export const BenchInputPolicySchema = z.object({
  /** URL of the lotus-bench style c1.json; null: the image must carry it at C1_PATH. */
  url: z.string().url().nullable().default(null),
  /** Lower-case hex sha256 of that file; required with a URL, so a wrong file is ours, not the host's. */
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'must be 64 lower-case hex digits')
    .nullable()
    .default(null),
  /** Seconds without a byte before the download counts as stalled (paramfetch's 5 minutes, scaled to 50 MB). */
  stallSec: z.number().positive().default(60),
});
export type BenchInputPolicy = z.infer<typeof BenchInputPolicySchema>;
export type BenchInputRequest = z.input<typeof BenchInputPolicySchema>;

/** Validates the request's fitness and bench-input parts; a bad one is a clear RangeError naming the field. */
export function resolveFitness(
  fitness: FitnessRequest | undefined,
  benchInput: BenchInputRequest | undefined,
): { fitness: FitnessPolicy; benchInput: BenchInputPolicy } {
  const f = FitnessPolicySchema.safeParse(fitness ?? {});
  if (!f.success) throw new RangeError(`fitness: ${issues(f.error)}`);
  const b = BenchInputPolicySchema.safeParse(benchInput ?? {});
  if (!b.success) throw new RangeError(`benchInput: ${issues(b.error)}`);
  if (b.data.url !== null && b.data.sha256 === null) throw new RangeError('benchInput.sha256 is required with a url');
  return { fitness: f.data, benchInput: b.data };
}

function issues(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.join('.') || '(value)'}: ${i.message}`).join('; ');
}

/** What the host measured (activities/gpu-host/fitness.ts); a probe that could not run carries its error. */
export interface FitnessMeasurement {
  gpus: Array<{ index: number; name: string; memoryMiB: number }>;
  /** nvidia-smi's own complaint when it failed (a broken or mismatched driver), else null. */
  driverError: string | null;
  driverVersion: string | null;
  cudaVersion: number | null;
  disk: { path: string; freeBytes: number; totalBytes: number } | { path: string; error: string };
  diskWrite: { bytes: number; ms: number } | { error: string };
  /** null when no sample URL is configured on the host. */
  download: { url: string; bytes: number; ms: number } | { url: string; error: string; ours: boolean } | null;
  elapsedMs: number;
}

/** What the offer claimed (Vast's units: gpu_ram in MB per GPU). */
export interface OfferClaim {
  gpuName: string;
  numGpus: number;
  gpuRamMb?: number;
}

export type FitnessCheck = 'gpuCount' | 'gpuModel' | 'vram' | 'driver' | 'cuda' | 'diskFree' | 'diskWrite' | 'download';

export interface FitnessProblem {
  check: FitnessCheck;
  message: string;
  measured: number | string | null;
  required: number | string;
  unit: string;
}

export interface FitnessVerdict {
  fit: boolean;
  problems: FitnessProblem[];
  /** Measured figures in real units, for the lifecycle's event and the failure's evidence. */
  figures: {
    gpus: number;
    gpuNames: string[];
    minVramMiB: number | null;
    cudaVersion: number | null;
    freeDiskGiB: number | null;
    diskWriteMBps: number | null;
    downloadMbps: number | null;
  };
  /** Checks that could not be judged and why (never counted against the host). */
  notJudged: string[];
}

const GIB = 2 ** 30;
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * Names as nvidia-smi prints them ("NVIDIA GeForce RTX 4090", "NVIDIA RTX A6000") against Vast's
 * ("RTX 4090", "RTX A6000"): vendor and brand words aside, the same model words in the same order.
 * A suffix that names another model ("Ti", "SUPER", "D") does not match; a memory-size or form-factor
 * suffix ("A100-PCIE-40GB" for "A100 PCIE") does.
 */
export function gpuModelMatches(smiName: string, offerName: string): boolean {
  const words = (s: string) =>
    s
      .toLowerCase()
      .replace(/[-_]/g, ' ')
      .split(/\s+/)
      .filter((w) => w && !['nvidia', 'geforce', 'tesla', 'quadro'].includes(w));
  const smi = words(smiName);
  const offer = words(offerName);
  if (offer.length === 0 || smi.length < offer.length) return false;
  if (offer.some((w, i) => smi[i] !== w)) return false;
  return smi
    .slice(offer.length)
    .every((w) => /^(\d+gb|pcie|sxm\d*|nvl|blackwell|generation|ada|server|edition)$/.test(w));
}

/** What the checks found: problems against the host, and checks that could not be judged (never against it). */
class Findings {
  readonly problems: FitnessProblem[] = [];
  readonly notJudged: string[] = [];
  add(
    check: FitnessCheck,
    message: string,
    measured: FitnessProblem['measured'],
    required: FitnessProblem['required'],
    unit: string,
  ): void {
    this.problems.push({ check, message, measured, required, unit });
  }
}

/** Judges the host's measurements against the offer and the thresholds. Pure: the workflow calls it. */
export function judgeFitness(m: FitnessMeasurement, offer: OfferClaim, p: FitnessPolicy): FitnessVerdict {
  const f = new Findings();
  if (m.driverError !== null) {
    f.add('driver', `nvidia-smi failed: ${m.driverError}`, m.driverError, 'a working NVIDIA driver', '');
  } else {
    judgeGpus(f, m, offer, p);
  }
  const freeDiskGiB = judgeFreeDisk(f, m, p);
  const diskWriteMBps = judgeDiskWrite(f, m, p);
  const downloadMbps = judgeDownload(f, m, p);
  return {
    fit: f.problems.length === 0,
    problems: f.problems,
    notJudged: f.notJudged,
    figures: {
      gpus: m.gpus.length,
      gpuNames: [...new Set(m.gpus.map((g) => g.name))],
      minVramMiB: m.gpus.length > 0 ? Math.min(...m.gpus.map((g) => g.memoryMiB)) : null,
      cudaVersion: m.cudaVersion,
      freeDiskGiB,
      diskWriteMBps,
      downloadMbps,
    },
  };
}

/** GPU count, model, VRAM against the offer's claims, and the driver's CUDA version against ours. */
function judgeGpus(f: Findings, m: FitnessMeasurement, offer: OfferClaim, p: FitnessPolicy): void {
  if (m.gpus.length < offer.numGpus) {
    f.add(
      'gpuCount',
      `${m.gpus.length} GPU(s) visible, the offer claims ${offer.numGpus}`,
      m.gpus.length,
      offer.numGpus,
      'GPUs',
    );
  }
  const wrong = m.gpus.filter((g) => !gpuModelMatches(g.name, offer.gpuName));
  if (wrong.length > 0) {
    f.add(
      'gpuModel',
      `GPU model ${[...new Set(wrong.map((g) => g.name))].join(', ')}, the offer claims ${offer.gpuName}`,
      wrong[0]?.name ?? null,
      offer.gpuName,
      '',
    );
  }
  if (offer.gpuRamMb !== undefined && offer.gpuRamMb > 0 && m.gpus.length > 0) {
    const least = Math.min(...m.gpus.map((g) => g.memoryMiB));
    const floor = Math.floor(offer.gpuRamMb * (1 - p.vramTolerance));
    if (least < floor) {
      f.add(
        'vram',
        `${least} MiB of VRAM on the smallest GPU, the offer claims ${offer.gpuRamMb} MB per GPU`,
        least,
        floor,
        'MiB',
      );
    }
  } else if (offer.gpuRamMb === undefined) f.notJudged.push('vram: the offer did not say its gpu_ram');
  if (m.cudaVersion === null) {
    f.add('cuda', 'nvidia-smi did not report a CUDA version', null, p.minCudaVersion, 'CUDA version');
  } else if (m.cudaVersion < p.minCudaVersion) {
    f.add(
      'cuda',
      `driver supports CUDA ${m.cudaVersion}, at least ${p.minCudaVersion} is needed`,
      m.cudaVersion,
      p.minCudaVersion,
      'CUDA version',
    );
  }
}

/** Free disk for the parameters and the work; its figure in GiB, null when unreadable. */
function judgeFreeDisk(f: Findings, m: FitnessMeasurement, p: FitnessPolicy): number | null {
  if ('error' in m.disk) {
    f.add('diskFree', `free disk unreadable at ${m.disk.path}: ${m.disk.error}`, null, p.minFreeDiskGiB, 'GiB');
    return null;
  }
  const freeDiskGiB = round(m.disk.freeBytes / GIB);
  if (freeDiskGiB < p.minFreeDiskGiB) {
    f.add(
      'diskFree',
      `${freeDiskGiB} GiB free at ${m.disk.path}, ${p.minFreeDiskGiB} GiB needed`,
      freeDiskGiB,
      p.minFreeDiskGiB,
      'GiB',
    );
  }
  return freeDiskGiB;
}

/** Disk write speed; its figure in MB/s, null when the write failed. */
function judgeDiskWrite(f: Findings, m: FitnessMeasurement, p: FitnessPolicy): number | null {
  if ('error' in m.diskWrite) {
    f.add('diskWrite', `disk write failed: ${m.diskWrite.error}`, null, p.minDiskWriteMBps, 'MB/s');
    return null;
  }
  const diskWriteMBps = round(m.diskWrite.bytes / 1e6 / (Math.max(1, m.diskWrite.ms) / 1000));
  if (diskWriteMBps < p.minDiskWriteMBps) {
    f.add(
      'diskWrite',
      `disk writes ${diskWriteMBps} MB/s, ${p.minDiskWriteMBps} MB/s needed`,
      diskWriteMBps,
      p.minDiskWriteMBps,
      'MB/s',
    );
  }
  return diskWriteMBps;
}

/** The download sample; its figure in Mb/s, null when not sampled or failed. */
function judgeDownload(f: Findings, m: FitnessMeasurement, p: FitnessPolicy): number | null {
  if (m.download === null) {
    f.notJudged.push('download: no sample URL configured on the host');
    return null;
  }
  if ('error' in m.download) {
    // A sample URL that answers 4xx/5xx is our configuration's fault, not the host's network.
    if (m.download.ours) f.notJudged.push(`download: ${m.download.error}`);
    else f.add('download', `download sample failed: ${m.download.error}`, null, p.minDownloadMbps, 'Mb/s');
    return null;
  }
  const downloadMbps = round((m.download.bytes * 8) / 1e6 / (Math.max(1, m.download.ms) / 1000));
  if (downloadMbps < p.minDownloadMbps) {
    f.add(
      'download',
      `download ${downloadMbps} Mb/s, ${p.minDownloadMbps} Mb/s needed`,
      downloadMbps,
      p.minDownloadMbps,
      'Mb/s',
    );
  }
  return downloadMbps;
}
