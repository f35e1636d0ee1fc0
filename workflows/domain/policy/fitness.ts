import { z } from 'zod';
import { gpuModelVerdict } from './gpu-names.js';

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
  /** Lowest CUDA the driver must report (nvidia-smi's "CUDA Version", "CUDA UMD Version" from 610); cuzk builds on CUDA 12. */
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

/** A probe we could not run or read: never evidence against the host (docs/operating.md, "Fitness gate"). */
export interface UnreadableProbe {
  probe: 'nvidia-smi' | 'disk-free' | 'disk-write';
  why: string;
  /** What the probe printed, trimmed: for the operator to report. */
  output: string;
}

/** What the host measured (activities/gpu-host/fitness.ts); a probe that could not run carries its error. */
export interface FitnessMeasurement {
  /** name or memoryMiB null: nvidia-smi gave no value (`[N/A]`, `[Not Supported]`), said in `notGiven`. */
  gpus: Array<{ index: number; name: string | null; memoryMiB: number | null; notGiven?: string }>;
  /** A failure nvidia-smi documents (no driver, NVML/driver mismatch, no devices, a GPU off the bus), else null. */
  driverError: string | null;
  /** The query's kmd_version or driver_version, else the banner's. */
  driverVersion: string | null;
  /** The highest CUDA the driver supports ("CUDA Version", from 610 "CUDA UMD Version"); null: it reports N/A. */
  cudaVersion: number | null;
  /** The banner's form: `driver` before driver 610, `kmd` from 610; null when nvidia-smi was not read. */
  smiForm: 'driver' | 'kmd' | null;
  /** null: df could not be read (an entry in `unreadable`). */
  disk: { path: string; freeBytes: number; totalBytes: number } | null;
  /** error: the host's disk refused the write; null: dd could not be run (an entry in `unreadable`). */
  diskWrite: { bytes: number; ms: number } | { error: string } | null;
  /** null when no sample URL is configured on the host. */
  download: { url: string; bytes: number; ms: number } | { url: string; error: string; ours: boolean } | null;
  unreadable: UnreadableProbe[];
  /** nvidia-smi's query output, trimmed, when a field was not given (evidence for an unreadable verdict). */
  smiOutput?: string;
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

/** A check the gate could not make because we could not read what it needs. */
export interface UnreadableCheck {
  check: FitnessCheck;
  message: string;
  output: string;
}

export interface FitnessVerdict {
  /** `unfit`: evidence against the host; `unreadable`: no evidence either way, only what we could not read. */
  outcome: 'fit' | 'unfit' | 'unreadable';
  problems: FitnessProblem[];
  unreadable: UnreadableCheck[];
  /** Measured figures in real units, for the lifecycle's event and the failure's evidence. */
  figures: {
    gpus: number;
    gpuNames: string[];
    minVramMiB: number | null;
    driverVersion: string | null;
    smiForm: 'driver' | 'kmd' | null;
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

/** What the checks found: evidence against the host, what we could not read, and what was not judged. */
class Findings {
  readonly problems: FitnessProblem[] = [];
  readonly unreadable: UnreadableCheck[] = [];
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
  cannotRead(check: FitnessCheck, message: string, output = ''): void {
    this.unreadable.push({ check, message, output });
  }
}

const PROBE_CHECK: Record<UnreadableProbe['probe'], FitnessCheck> = {
  'nvidia-smi': 'driver',
  'disk-free': 'diskFree',
  'disk-write': 'diskWrite',
};

/**
 * Judges the host's measurements against the offer and the thresholds. Pure: the workflow calls it.
 * Evidence against the host makes it `unfit` whatever else was unreadable; with none, anything we could
 * not read makes it `unreadable`.
 */
export function judgeFitness(m: FitnessMeasurement, offer: OfferClaim, p: FitnessPolicy): FitnessVerdict {
  const f = new Findings();
  for (const u of m.unreadable) f.cannotRead(PROBE_CHECK[u.probe], `${u.probe}: ${u.why}`, u.output);
  if (m.driverError !== null) {
    f.add('driver', `nvidia-smi failed: ${m.driverError}`, m.driverError, 'a working NVIDIA driver', '');
  } else if (!m.unreadable.some((u) => u.probe === 'nvidia-smi')) {
    judgeGpus(f, m, offer, p);
  }
  const freeDiskGiB = judgeFreeDisk(f, m, p);
  const diskWriteMBps = judgeDiskWrite(f, m, p);
  const downloadMbps = judgeDownload(f, m, p);
  const memories = m.gpus.flatMap((g) => (g.memoryMiB === null ? [] : [g.memoryMiB]));
  return {
    outcome: f.problems.length > 0 ? 'unfit' : f.unreadable.length > 0 ? 'unreadable' : 'fit',
    problems: f.problems,
    unreadable: f.unreadable,
    notJudged: f.notJudged,
    figures: {
      gpus: m.gpus.length,
      gpuNames: [...new Set(m.gpus.flatMap((g) => (g.name === null ? [] : [g.name])))],
      minVramMiB: memories.length > 0 ? Math.min(...memories) : null,
      driverVersion: m.driverVersion,
      smiForm: m.smiForm,
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
    const msg = `${m.gpus.length} GPU(s) visible, the offer claims ${offer.numGpus}`;
    f.add('gpuCount', msg, m.gpus.length, offer.numGpus, 'GPUs');
  }
  judgeModel(f, m, offer);
  judgeVram(f, m, offer, p);
  if (m.cudaVersion === null) {
    // The driver itself says it has no CUDA to offer: evidence, not a reading of ours that failed.
    f.add('cuda', 'nvidia-smi reports CUDA Version: N/A', 'N/A', p.minCudaVersion, 'CUDA version');
  } else if (m.cudaVersion < p.minCudaVersion) {
    const msg = `driver supports CUDA ${m.cudaVersion}, at least ${p.minCudaVersion} is needed`;
    f.add('cuda', msg, m.cudaVersion, p.minCudaVersion, 'CUDA version');
  }
}

/** A kill needs a certain mismatch: both names known to the table (gpu-names.ts) and different models. */
function judgeModel(f: Findings, m: FitnessMeasurement, offer: OfferClaim): void {
  const unnamed = m.gpus.filter((g) => g.name === null);
  if (unnamed.length > 0) {
    const which = unnamed.map((g) => `GPU ${g.index}: ${g.notGiven ?? 'no name'}`).join(', ');
    f.cannotRead('gpuModel', `nvidia-smi gave no name for ${which}`, m.smiOutput ?? '');
  }
  const names = [...new Set(m.gpus.flatMap((g) => (g.name === null ? [] : [g.name])))];
  const wrong = names.filter((n) => gpuModelVerdict(n, offer.gpuName) === 'mismatch');
  const unknown = names.filter((n) => gpuModelVerdict(n, offer.gpuName) === 'unknown');
  if (wrong.length > 0) {
    f.add(
      'gpuModel',
      `GPU model ${wrong.join(', ')}, the offer claims ${offer.gpuName}`,
      wrong[0] ?? null,
      offer.gpuName,
      '',
    );
  }
  if (unknown.length > 0) {
    f.notJudged.push(
      `gpuModel: cannot tell whether ${unknown.join(', ')} is a ${offer.gpuName} (names not in gpu-names.ts)`,
    );
  }
}

function judgeVram(f: Findings, m: FitnessMeasurement, offer: OfferClaim, p: FitnessPolicy): void {
  if (offer.gpuRamMb === undefined || offer.gpuRamMb <= 0) {
    f.notJudged.push('vram: the offer did not say its gpu_ram');
    return;
  }
  const unsized = m.gpus.filter((g) => g.memoryMiB === null);
  if (unsized.length > 0) {
    const which = unsized.map((g) => `GPU ${g.index}: ${g.notGiven ?? 'no memory.total'}`).join(', ');
    f.cannotRead('vram', `nvidia-smi gave no memory.total for ${which}`, m.smiOutput ?? '');
  }
  const sized = m.gpus.flatMap((g) => (g.memoryMiB === null ? [] : [g.memoryMiB]));
  if (sized.length === 0) return;
  const least = Math.min(...sized);
  const floor = Math.floor(offer.gpuRamMb * (1 - p.vramTolerance));
  if (least < floor) {
    const msg = `${least} MiB of VRAM on the smallest GPU, the offer claims ${offer.gpuRamMb} MB per GPU`;
    f.add('vram', msg, least, floor, 'MiB');
  }
}

/** Free disk for the parameters and the work; its figure in GiB, null when unreadable. */
function judgeFreeDisk(f: Findings, m: FitnessMeasurement, p: FitnessPolicy): number | null {
  if (m.disk === null) return null;
  const freeDiskGiB = round(m.disk.freeBytes / GIB);
  if (freeDiskGiB < p.minFreeDiskGiB) {
    const msg = `${freeDiskGiB} GiB free at ${m.disk.path}, ${p.minFreeDiskGiB} GiB needed`;
    f.add('diskFree', msg, freeDiskGiB, p.minFreeDiskGiB, 'GiB');
  }
  return freeDiskGiB;
}

/** Disk write speed; its figure in MB/s, null when the write failed or could not run. */
function judgeDiskWrite(f: Findings, m: FitnessMeasurement, p: FitnessPolicy): number | null {
  if (m.diskWrite === null) return null;
  if ('error' in m.diskWrite) {
    f.add('diskWrite', `disk write failed: ${m.diskWrite.error}`, null, p.minDiskWriteMBps, 'MB/s');
    return null;
  }
  const diskWriteMBps = round(m.diskWrite.bytes / 1e6 / (Math.max(1, m.diskWrite.ms) / 1000));
  if (diskWriteMBps < p.minDiskWriteMBps) {
    const msg = `disk writes ${diskWriteMBps} MB/s, ${p.minDiskWriteMBps} MB/s needed`;
    f.add('diskWrite', msg, diskWriteMBps, p.minDiskWriteMBps, 'MB/s');
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
    const msg = `download ${downloadMbps} Mb/s, ${p.minDownloadMbps} Mb/s needed`;
    f.add('download', msg, downloadMbps, p.minDownloadMbps, 'Mb/s');
  }
  return downloadMbps;
}
