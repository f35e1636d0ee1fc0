import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FitnessMeasurement, UnreadableProbe } from '../../workflows/domain/policy/fitness.js';
import { firstLines, measureGpus, trimOutput } from './fitness-gpus.js';
import { startHeartbeatTicker } from './heartbeat-ticker.js';
import { runCommand } from './run-command.js';
import type { SpawnHostProcess } from './spawn.js';
import type { StepContext } from './step-keeper.js';

/** How this machine is measured; each is a real tool on the host (the simulator points them at fakes). */
export interface FitnessProbes {
  nvidiaSmi: string[];
  /** Prints free and total bytes of the filesystem holding the path appended (GNU df, i.e. statfs). */
  diskFree: string[];
  /** Writes `count=<MiB>` MiB to `of=<file>` (appended) and syncs them before it exits (dd conv=fdatasync). */
  diskWrite: string[];
  /** What the download sample reads (a Range request); none: the check is not judged. */
  sampleUrl: string | null;
  /** The parameter cache: its filesystem must hold the parameters and be fast enough to write them. */
  paramCacheDir: string;
  spawn?: SpawnHostProcess;
}

export interface FitnessInput {
  diskProbeMiB: number;
  downloadSampleMiB: number;
  probeSec: number;
}

/** Measures the host in seconds: GPUs and driver, free disk, disk writes, a download sample. Never judges. */
export async function measureFitness(
  p: FitnessProbes,
  input: FitnessInput,
  ctx: StepContext,
): Promise<FitnessMeasurement> {
  const started = Date.now();
  const timeoutMs = input.probeSec * 1000;
  let probe = 'nvidia-smi';
  // Each probe may take up to probeSec on a struggling host: keep heartbeating through them.
  const stopTicker = startHeartbeatTicker(ctx, () => ({ probe, elapsedMs: Date.now() - started }));
  try {
    await mkdir(p.paramCacheDir, { recursive: true });
    const { unreadable: smi, ...gpu } = await measureGpus(p.nvidiaSmi, timeoutMs, p.spawn);
    probe = 'disk-free';
    const disk = await measureDiskFree(p, timeoutMs);
    probe = 'disk-write';
    const diskWrite = await measureDiskWrite(p, input.diskProbeMiB, timeoutMs);
    probe = 'download';
    const download = p.sampleUrl ? await measureDownload(p.sampleUrl, input.downloadSampleMiB, timeoutMs, ctx) : null;
    const unreadable = [smi, disk.unreadable, diskWrite.unreadable].filter((u): u is UnreadableProbe => u !== null);
    return {
      ...gpu,
      disk: disk.value,
      diskWrite: diskWrite.value,
      download,
      unreadable,
      elapsedMs: Date.now() - started,
    };
  } finally {
    stopTicker();
  }
}

type Probed<T> = { value: T; unreadable: UnreadableProbe | null };

/** Free bytes of the cache's filesystem; a df we could not run or read is unreadable, not a full disk. */
async function measureDiskFree(p: FitnessProbes, timeoutMs: number): Promise<Probed<FitnessMeasurement['disk']>> {
  const r = await runCommand([...p.diskFree, p.paramCacheDir], timeoutMs, p.spawn);
  const last = r.stdout.trim().split('\n').pop() ?? '';
  const m = /^\s*(\d+)\s+(\d+)\s*$/.exec(last);
  if (r.code !== 0 || !m) {
    const why = r.startError ?? (r.timedOut ? `no answer within ${timeoutMs / 1000} s` : `exit ${r.code}`);
    const output = trimOutput(r.stdout + r.stderr);
    return { value: null, unreadable: { probe: 'disk-free', why: `${why} at ${p.paramCacheDir}`, output } };
  }
  const value = { path: p.paramCacheDir, freeBytes: Number(m[1]), totalBytes: Number(m[2]) };
  return { value, unreadable: null };
}

/**
 * A write cut short by the deadline still measures: what reached the file in that time. A dd that ran
 * and failed is the host's disk refusing the write; one that could not start is unreadable.
 */
async function measureDiskWrite(
  p: FitnessProbes,
  mib: number,
  timeoutMs: number,
): Promise<Probed<FitnessMeasurement['diskWrite']>> {
  const file = path.join(p.paramCacheDir, '.fitness-write-probe');
  try {
    const r = await runCommand([...p.diskWrite, `of=${file}`, `count=${mib}`], timeoutMs, p.spawn);
    if (r.timedOut) {
      const written = await stat(file).then(
        (s) => s.size,
        () => 0,
      );
      return { value: { bytes: written, ms: r.ms }, unreadable: null };
    }
    if (r.startError !== undefined) {
      return { value: null, unreadable: { probe: 'disk-write', why: r.startError, output: '' } };
    }
    if (r.code !== 0)
      return { value: { error: `exit ${r.code}: ${firstLines(r.stderr + r.stdout)}` }, unreadable: null };
    return { value: { bytes: mib * 2 ** 20, ms: r.ms }, unreadable: null };
  } finally {
    await rm(file, { force: true });
  }
}

/** Reads up to `mib` MiB of the sample URL; a deadline ends the sample, judged on what arrived. */
async function measureDownload(
  url: string,
  mib: number,
  timeoutMs: number,
  ctx: StepContext,
): Promise<NonNullable<FitnessMeasurement['download']>> {
  const want = mib * 2 ** 20;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error('sample deadline')), timeoutMs);
  const onCancel = () => abort.abort(ctx.cancellationSignal.reason);
  ctx.cancellationSignal.addEventListener('abort', onCancel);
  const started = Date.now();
  let bytes = 0;
  try {
    const res = await fetch(url, { headers: { Range: `bytes=0-${want - 1}` }, signal: abort.signal });
    if (!res.ok || !res.body) {
      await res.body?.cancel();
      return { url, error: `sample URL answered HTTP ${res.status}`, ours: true };
    }
    const reader = res.body.getReader();
    try {
      while (bytes < want) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.byteLength;
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
    return { url, bytes, ms: Date.now() - started };
  } catch (err) {
    if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? err;
    // Cut short by our deadline: a measurement of a slow link, not an error.
    if (abort.signal.aborted && bytes > 0) return { url, bytes, ms: Date.now() - started };
    const msg =
      err instanceof Error
        ? `${err.message}${err.cause instanceof Error ? `: ${err.cause.message}` : ''}`
        : String(err);
    return { url, error: abort.signal.aborted ? `no byte within ${timeoutMs / 1000} s` : msg, ours: false };
  } finally {
    clearTimeout(timer);
    ctx.cancellationSignal.removeEventListener('abort', onCancel);
  }
}
