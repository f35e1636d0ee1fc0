import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBenchInput } from '../../activities/gpu-host/bench-input.js';
import { measureFitness } from '../../activities/gpu-host/fitness.js';
import type { StepContext } from '../../activities/gpu-host/step-keeper.js';
import { SIM_C1_JSON, SIM_C1_SHA256 } from '../../infra/sim/net.js';

// The host side of the gate against this machine's real df and dd, a stand-in nvidia-smi, and a local
// HTTP server that can serve, refuse or stall.
const SMI = ['bash', path.resolve('infra/sim/host-tools/nvidia-smi.sh'), '2', 'NVIDIA A40', '46068'];
const beats: unknown[] = [];
const ctx: StepContext = {
  heartbeat: (d) => beats.push(d),
  cancellationSignal: new AbortController().signal,
  info: { heartbeatTimeoutMs: 10_000 },
};

let dir: string;
let base: string;
let server: http.Server;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'fitness-'));
  server = http.createServer((req, res) => {
    if (req.url === '/c1.json') res.end(SIM_C1_JSON);
    else if (req.url === '/sample') res.end(Buffer.alloc(2 ** 20));
    else if (req.url === '/stall') {
      res.writeHead(200, { 'content-length': 1000 });
      res.write('{"SectorNum"'); // and nothing more
    } else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
});
afterAll(async () => {
  server.closeAllConnections();
  server.close();
  await rm(dir, { recursive: true, force: true });
});

const probes = (over = {}) => ({
  nvidiaSmi: [...SMI, 'ok', '12.4'],
  diskFree: ['df', '--block-size=1', '--output=avail,size'],
  diskWrite: ['dd', 'if=/dev/zero', 'bs=1M', 'conv=fdatasync', 'status=none'],
  sampleUrl: `${base}/sample`,
  paramCacheDir: path.join(dir, 'params'),
  ...over,
});
const input = { diskProbeMiB: 8, downloadSampleMiB: 1, probeSec: 10 };

describe('fitness probes on a real machine', () => {
  it('measures GPUs, driver, free disk (df), disk writes (dd) and a download', async () => {
    const m = await measureFitness(probes(), input, ctx);
    expect(m.driverError).toBeNull();
    expect(m.gpus).toEqual([
      { index: 0, name: 'NVIDIA A40', memoryMiB: 46068 },
      { index: 1, name: 'NVIDIA A40', memoryMiB: 46068 },
    ]);
    expect(m.cudaVersion).toBe(12.4);
    expect(m.driverVersion).toBe('550.54.14');
    expect(m.disk).toMatchObject({ path: path.join(dir, 'params') });
    expect('freeBytes' in m.disk && m.disk.freeBytes > 0 && m.disk.totalBytes >= m.disk.freeBytes).toBe(true);
    expect(m.diskWrite).toMatchObject({ bytes: 8 * 2 ** 20 });
    expect(m.download).toMatchObject({ url: `${base}/sample`, bytes: 2 ** 20 });
    expect(beats.length).toBeGreaterThan(0);
  });

  it('a driver that fails is reported with what nvidia-smi said; a missing tool or a 404 sample too', async () => {
    const broken = await measureFitness(probes({ nvidiaSmi: [...SMI, 'mismatch', '12.4'] }), input, ctx);
    expect(broken.driverError).toMatch(/exit 18: Failed to initialize NVML: Driver\/library version mismatch/);
    expect(broken.gpus).toEqual([]);
    const missing = await measureFitness(
      probes({ nvidiaSmi: ['/nonexistent/nvidia-smi'], sampleUrl: `${base}/nope` }),
      input,
      ctx,
    );
    expect(missing.driverError).toMatch(/ENOENT/);
    expect(missing.download).toEqual({ url: `${base}/nope`, error: 'sample URL answered HTTP 404', ours: true });
  });
});

describe('the benchmark input', () => {
  const c1Path = () => path.join(dir, 'data', 'c1.json');
  const cache = () => path.join(dir, 'params');
  const typeOf = (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (e: unknown) => (e instanceof ApplicationFailure ? `${e.type}: ${e.message}` : String(e)),
    );

  it('absent with no URL, a URL that answers 404, or the wrong checksum: BenchInputMissing (ours)', async () => {
    const req = { url: null, sha256: null, stallSec: 5 };
    expect(await typeOf(ensureBenchInput(c1Path(), cache(), req, ctx))).toMatch(/^BenchInputMissing: no C1 input/);
    const r404 = { url: `${base}/missing.json`, sha256: SIM_C1_SHA256, stallSec: 5 };
    expect(await typeOf(ensureBenchInput(c1Path(), cache(), r404, ctx))).toMatch(/^BenchInputMissing: .*HTTP 404/);
    const wrong = { url: `${base}/c1.json`, sha256: 'f'.repeat(64), stallSec: 5 };
    expect(await typeOf(ensureBenchInput(c1Path(), cache(), wrong, ctx))).toMatch(
      new RegExp(`^BenchInputMissing: .*sha256 ${SIM_C1_SHA256}, not the configured f{64}`),
    );
  });

  it('a download that stalls is the host network: BenchInputFetchFailed', async () => {
    const stall = { url: `${base}/stall`, sha256: SIM_C1_SHA256, stallSec: 1 };
    expect(await typeOf(ensureBenchInput(c1Path(), cache(), stall, ctx))).toMatch(
      /^BenchInputFetchFailed: C1 download stalled: no byte for 1 s after 12 bytes/,
    );
  });

  it('downloads, verifies, caches beside the parameters and links C1_PATH; then finds it present', async () => {
    const req = { url: `${base}/c1.json`, sha256: SIM_C1_SHA256, stallSec: 5 };
    expect(await ensureBenchInput(c1Path(), cache(), req, ctx)).toMatchObject({ source: 'download' });
    const cached = path.join(cache(), `c1-${SIM_C1_SHA256}.json`);
    expect(await readlink(c1Path())).toBe(cached);
    expect(
      createHash('sha256')
        .update(await readFile(c1Path()))
        .digest('hex'),
    ).toBe(SIM_C1_SHA256);
    expect(await ensureBenchInput(c1Path(), cache(), req, ctx)).toMatchObject({ source: 'present' });
    // A lost link (a new container on the same volume) finds the cached copy.
    await rm(c1Path());
    expect(await ensureBenchInput(c1Path(), cache(), req, ctx)).toMatchObject({ source: 'cache' });
    // A C1_PATH baked into the image is used as it is, with no URL at all.
    await rm(c1Path());
    await writeFile(c1Path(), SIM_C1_JSON);
    expect(await ensureBenchInput(c1Path(), cache(), { url: null, sha256: null, stallSec: 5 }, ctx)).toMatchObject({
      source: 'present',
    });
  });
});
