import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { access, mkdir, readFile, rename, rm, symlink, unlink } from 'node:fs/promises';
import path from 'node:path';
import { FailureType } from '../../workflows/domain/failures.js';
import { loadC1 } from './c1-input.js';
import { failure } from './errors.js';
import type { StepContext } from './step-keeper.js';

export interface BenchInputRequest {
  url: string | null;
  sha256: string | null;
  stallSec: number;
}

export interface BenchInputResult {
  /** present: C1_PATH was there (baked into the image, or linked by an earlier call); cache: an earlier download beside the parameters; download: fetched now. */
  source: 'present' | 'cache' | 'download';
  bytes: number;
  elapsedMs: number;
}

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );
const sha256Of = async (file: string) =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex');

/** Ours: no URL, a URL that does not serve the file, a file whose checksum is not the one we configured. */
const ours = (message: string, details: object) =>
  failure(FailureType.BenchInputMissing, message, {}, { ...details, ours: true });

/**
 * Makes sure the benchmark's C1 input is at `c1Path` before anything is proven: the image's copy, an
 * earlier download cached beside the parameters, or a download now (checksum-verified, progress in
 * heartbeats, a stall deadline like paramfetch's). C1_PATH then links to the cached copy.
 */
export async function ensureBenchInput(
  c1Path: string,
  cacheDir: string,
  req: BenchInputRequest,
  ctx: StepContext,
): Promise<BenchInputResult> {
  const started = Date.now();
  ctx.heartbeat({ bytes: 0, elapsedMs: 0 });
  if (await exists(c1Path)) {
    try {
      const c1 = await loadC1(c1Path);
      return { source: 'present', bytes: c1.bytes.length, elapsedMs: Date.now() - started };
    } catch (err) {
      if (req.url === null) throw ours(`${c1Path} is not a usable C1 input: ${String(err)}`, { c1Path });
    }
  }
  if (req.url === null || req.sha256 === null) {
    throw ours(`no C1 input at ${c1Path} and no benchInput.url to fetch it from`, { c1Path });
  }
  const cached = path.join(cacheDir, `c1-${req.sha256}.json`);
  let source: BenchInputResult['source'] = 'cache';
  if (!(await exists(cached)) || (await sha256Of(cached)) !== req.sha256) {
    await download(req.url, req.sha256, cached, req.stallSec * 1000, ctx);
    source = 'download';
  }
  await mkdir(path.dirname(c1Path), { recursive: true });
  await unlink(c1Path).catch(() => undefined);
  await symlink(cached, c1Path);
  try {
    const c1 = await loadC1(c1Path);
    return { source, bytes: c1.bytes.length, elapsedMs: Date.now() - started };
  } catch (err) {
    throw ours(`the file at benchInput.url is not a C1 input: ${String(err)}`, { url: req.url });
  }
}

async function download(url: string, sha256: string, dest: string, stallMs: number, ctx: StepContext): Promise<void> {
  await mkdir(path.dirname(dest), { recursive: true });
  const partial = `${dest}.partial`;
  const started = Date.now();
  const abort = new AbortController();
  const onCancel = () => abort.abort(ctx.cancellationSignal.reason);
  ctx.cancellationSignal.addEventListener('abort', onCancel);
  let bytes = 0;
  let lastByteAt = Date.now();
  let stalled = false;
  const progress = () => ({ url, bytes, elapsedMs: Date.now() - started });
  const watchdog = setInterval(
    () => {
      ctx.heartbeat(progress());
      if (Date.now() - lastByteAt > stallMs) {
        stalled = true;
        abort.abort(new Error('stalled'));
      }
    },
    Math.min(1000, stallMs / 4),
  );
  try {
    let res: Response;
    try {
      res = await fetch(url, { signal: abort.signal });
    } catch (err) {
      if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? err;
      if (stalled) throw stalledFailure(url, bytes, stallMs);
      // No answer at all from our URL (a wrong host name, nothing listening): our configuration.
      throw ours(`benchInput.url could not be fetched: ${describe(err)}`, { url });
    }
    if (!res.ok || !res.body) throw ours(`benchInput.url answered HTTP ${res.status}`, { url, httpStatus: res.status });
    const hash = createHash('sha256');
    const out = createWriteStream(partial);
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.byteLength;
        lastByteAt = Date.now();
        hash.update(value);
        if (!out.write(value)) await new Promise<void>((r) => out.once('drain', () => r()));
      }
    } catch (err) {
      if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? err;
      if (stalled) throw stalledFailure(url, bytes, stallMs);
      throw failure(
        FailureType.BenchInputFetchFailed,
        `C1 download broke after ${bytes} bytes: ${describe(err)}`,
        {},
        { url, bytes },
      );
    } finally {
      await new Promise<void>((r) => out.end(() => r()));
    }
    const got = hash.digest('hex');
    if (got !== sha256) {
      throw ours(`benchInput.url served a file with sha256 ${got}, not the configured ${sha256}`, {
        url,
        sha256: got,
        expected: sha256,
        bytes,
      });
    }
    await rename(partial, dest);
  } finally {
    clearInterval(watchdog);
    ctx.cancellationSignal.removeEventListener('abort', onCancel);
    await rm(partial, { force: true });
  }
}

function stalledFailure(url: string, bytes: number, stallMs: number) {
  return failure(
    FailureType.BenchInputFetchFailed,
    `C1 download stalled: no byte for ${Math.round(stallMs / 1000)} s after ${bytes} bytes`,
    {},
    { url, bytes, stalled: true },
  );
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message;
}
