import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBenchInput } from '../../activities/gpu-host/bench-input.js';
import { type FitnessProbes, measureFitness } from '../../activities/gpu-host/fitness.js';
import type { StepContext } from '../../activities/gpu-host/step-keeper.js';
import { z } from 'zod';
import { simFitnessEnv } from '../../infra/sim/host-tools/env.js';
import { SIM_C1_JSON, SIM_C1_SHA256 } from '../../infra/sim/net.js';
import { FitnessPolicySchema, judgeFitness } from '../../workflows/domain/policy/fitness.js';
import { simOffer } from '../helpers/offers.js';
import { smiFixtures } from '../helpers/smi-fixtures.js';

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

const probes = (over: Partial<FitnessProbes> = {}): FitnessProbes => ({
  nvidiaSmi: [...SMI, 'ok', '12.4', '550.54.14'],
  diskFree: ['df', '--block-size=1', '--output=avail,size'],
  diskWrite: ['dd', 'if=/dev/zero', 'bs=1M', 'conv=fdatasync', 'status=none'],
  sampleUrl: `${base}/sample`,
  paramCacheDir: path.join(dir, 'params'),
  ...over,
});
const input = { diskProbeMiB: 8, downloadSampleMiB: 1, probeSec: 10 };
// Concurrent cases each write their disk probe in a cache of their own.
let caches = 0;
const ownCache = () => path.join(dir, `params-${++caches}`);
const policy = FitnessPolicySchema.parse({});
// This machine's own disk is measured where no stand-in is: judge its GPUs, not how full or busy it is.
const thisMachine = FitnessPolicySchema.parse({ minFreeDiskGiB: 0.001, minDiskWriteMBps: 0.001 });

describe('fitness probes on a real machine', () => {
  it('measures GPUs, driver, free disk (df), disk writes (dd) and a download', async () => {
    const m = await measureFitness(probes(), input, ctx);
    expect(m.driverError).toBeNull();
    expect(m.unreadable).toEqual([]);
    expect(m.gpus).toEqual([
      { index: 0, name: 'NVIDIA A40', memoryMiB: 46068 },
      { index: 1, name: 'NVIDIA A40', memoryMiB: 46068 },
    ]);
    expect(m).toMatchObject({ cudaVersion: 12.4, driverVersion: '550.54.14', smiForm: 'driver' });
    expect(m.disk).toMatchObject({ path: path.join(dir, 'params') });
    expect(m.disk !== null && m.disk.freeBytes > 0 && m.disk.totalBytes >= m.disk.freeBytes).toBe(true);
    expect(m.diskWrite).toMatchObject({ bytes: 8 * 2 ** 20 });
    expect(m.download).toMatchObject({ url: `${base}/sample`, bytes: 2 ** 20 });
    expect(beats.length).toBeGreaterThan(0);
  });

  it('a tool that will not run, a df we cannot read, a dd that cannot start: unreadable, not the host', async () => {
    const m = await measureFitness(
      probes({
        nvidiaSmi: ['/nonexistent/nvidia-smi'],
        diskFree: ['bash', '-c', 'echo "df: cannot read table of mounted file systems" >&2; exit 1', 'df'],
        diskWrite: ['/nonexistent/dd'],
        sampleUrl: `${base}/nope`,
      }),
      input,
      ctx,
    );
    expect(m.driverError).toBeNull();
    expect(m.unreadable.map((u) => u.probe)).toEqual(['nvidia-smi', 'disk-free', 'disk-write']);
    expect(m.unreadable[0]?.why).toMatch(/ENOENT/);
    expect(m.unreadable[1]?.output).toMatch(/cannot read table of mounted file systems/);
    expect(m.disk).toBeNull();
    expect(m.diskWrite).toBeNull();
    expect(m.download).toEqual({ url: `${base}/nope`, error: 'sample URL answered HTTP 404', ours: true });
    expect(judgeFitness(m, { gpuName: 'A40', numGpus: 2, gpuRamMb: 46068 }, policy).outcome).toBe('unreadable');
  });

  it('a KMD banner from a driver that refuses kmd_version: asked again with the fields every driver knows', async () => {
    const smi = [
      'if [ $# -eq 0 ]; then echo "| NVIDIA-SMI 610.57.04  KMD Version: 610.57.04  CUDA UMD Version: 13.3 |"; exit 0; fi',
      'case "$1" in *kmd_version*) echo \'Field "kmd_version" is not a valid field to query.\'; exit 2;; esac',
      'echo "0, NVIDIA L40S, 46068, GPU-0, 610.57.04"',
    ].join('\n');
    const m = await measureFitness(probes({ nvidiaSmi: ['bash', '-c', smi, 'nvidia-smi'] }), input, ctx);
    expect(m).toMatchObject({ smiForm: 'kmd', driverVersion: '610.57.04', cudaVersion: 13.3, unreadable: [] });
    expect(m.gpus).toEqual([{ index: 0, name: 'NVIDIA L40S', memoryMiB: 46068 }]);
  });

  it('a dd that runs and fails is the host’s disk refusing the write: evidence', async () => {
    const m = await measureFitness(
      probes({ diskWrite: ['bash', '-c', 'echo "dd: error writing: No space left on device" >&2; exit 1', 'dd'] }),
      input,
      ctx,
    );
    expect(m.diskWrite).toEqual({ error: 'exit 1: dd: error writing: No space left on device' });
    expect(m.unreadable).toEqual([]);
  });
});

// Each form in test/fixtures/nvidia-smi played as nvidia-smi on the host, measured and judged as the
// gate does: the captured healthy hosts pass, the documented failures are unfit, the rest unreadable.
describe.concurrent('nvidia-smi as real hosts print it, measured and judged', () => {
  const PLAY = path.resolve('test/fixtures/nvidia-smi/play.mjs');
  it.each(smiFixtures().map((f) => [f.name, f] as const))('%s', async (_n, f) => {
    const own = { nvidiaSmi: ['node', PLAY, f.file], sampleUrl: null, paramCacheDir: ownCache() };
    const m = await measureFitness(probes(own), input, ctx);
    const v = judgeFitness(m, f.offer, thisMachine);
    expect(v.outcome, JSON.stringify([v.problems, v.unreadable, v.notJudged])).toBe(f.expect.outcome);
    if (f.expect.gpus) expect(m.gpus).toEqual(f.expect.gpus);
    if (f.expect.driverVersion) expect(m.driverVersion).toBe(f.expect.driverVersion);
    if (f.expect.cudaVersion !== undefined) expect(m.cudaVersion).toBe(f.expect.cudaVersion);
    if (f.expect.form) expect(m.smiForm).toBe(f.expect.form);
    if (f.expect.driverError) expect(m.driverError).toContain(f.expect.driverError);
    if (f.expect.outcome === 'unfit') expect(v.problems.map((p) => p.check)).toEqual([f.expect.check]);
    if (f.expect.outcome === 'unreadable') {
      expect(v.unreadable.map((u) => u.check)).toEqual([f.expect.check]);
      // The raw output, trimmed, for the operator's report.
      expect(v.unreadable[0]?.output.length).toBeGreaterThan(0);
    }
    if (f.expect.outcome === 'fit') expect(v.notJudged).toEqual(['download: no sample URL configured on the host']);
  });
});

// Each way a simulated host lies or falls short (infra/sim/host-tools, as the Vast simulator boots its
// hosts), measured by the product's probes and judged: the properties the end-to-end gate test proved.
describe.concurrent('the simulated hosts’ stand-ins (infra/sim/host-tools), measured and judged', () => {
  const claim = { gpuName: 'RTX 4090', numGpus: 2, gpuRamMb: 24_564 };
  const simProbes = async (machine: Record<string, unknown>) => {
    const env = await simFitnessEnv(simOffer({ host: { machine } }));
    const argv = (k: string) => z.array(z.string()).parse(JSON.parse(env[k] ?? '[]'));
    return probes({
      nvidiaSmi: argv('NVIDIA_SMI_CMD'),
      diskFree: argv('DISK_FREE_CMD'),
      diskWrite: argv('DISK_WRITE_CMD'),
      sampleUrl: env.FITNESS_SAMPLE_URL ?? null,
      paramCacheDir: ownCache(),
    });
  };
  // A slow disk or link is cut at 2 s and judged on what it did; the others get the usual 10 s (a loaded
  // machine's bash takes its time, and a probe cut short would read as unreadable). The disk probe is the
  // default 256 MiB: on 8 MiB a loaded machine's process start alone would pull 2000 MB/s under the floor;
  // the slow disk's is 16 MiB, so that the stand-in's steps (a tenth of its write each) fit the cut.
  const judged = async (machine: Record<string, unknown>) => {
    const slow = 'diskWriteMBps' in machine || 'downMbps' in machine;
    const probe = { ...input, diskProbeMiB: 'diskWriteMBps' in machine ? 16 : 256, probeSec: slow ? 2 : 10 };
    const m = await measureFitness(await simProbes(machine), probe, ctx);
    return { m, v: judgeFitness(m, claim, policy) };
  };

  it.each([
    ['fewer GPUs than the offer', { gpus: 1 }, 'gpuCount', { gpus: 1 }],
    [
      'another GPU model',
      { gpuName: 'NVIDIA GeForce RTX 3090' },
      'gpuModel',
      { gpuNames: ['NVIDIA GeForce RTX 3090'] },
    ],
    ['less VRAM', { vramMiB: 12_288 }, 'vram', { minVramMiB: 12_288 }],
    ['no driver', { driver: 'broken' }, 'driver', { gpus: 0 }],
    ['an NVML/driver mismatch', { driver: 'mismatch' }, 'driver', { gpus: 0 }],
    ['no devices', { driver: 'no-devices' }, 'driver', { gpus: 0 }],
    ['a GPU off the bus', { driver: 'gpu-lost' }, 'driver', { gpus: 0 }],
    ['CUDA Version: N/A', { cudaVersion: 'N/A' }, 'cuda', { cudaVersion: null }],
    ['a CUDA older than cuzk needs', { cudaVersion: 11.8 }, 'cuda', { cudaVersion: 11.8 }],
    ['a full disk', { diskFreeGiB: 20 }, 'diskFree', { freeDiskGiB: 20 }],
    ['a slow disk', { diskWriteMBps: 2 }, 'diskWrite', {}],
    ['a slow network', { downMbps: 1 }, 'download', {}],
  ] as const)('%s: unfit', async (_name, machine, check, figures) => {
    const { m, v } = await judged(machine);
    expect(v.outcome).toBe('unfit');
    expect(v.problems.map((p) => p.check)).toEqual([check]);
    expect(v.figures).toMatchObject(figures);
    expect(v.problems[0]?.unit).toBeTypeOf('string');
    if (check === 'diskWrite') expect(v.problems[0]?.measured).toBeLessThan(3);
    if (check === 'download') expect(v.problems[0]?.measured).toBeLessThan(2);
    if ('driver' in machine && machine.driver === 'broken') {
      expect(m.driverError).toContain("couldn't communicate with the NVIDIA driver");
    }
  });

  it.each([
    ['output that is not nvidia-smi’s', { driver: 'garbled' }, 'driver'],
    ['memory.total [N/A]', { vramMiB: 'N/A' }, 'vram'],
  ] as const)('%s: unreadable, with the output', async (_name, machine, check) => {
    const { v } = await judged(machine);
    expect(v.outcome).toBe('unreadable');
    expect(v.unreadable.map((u) => u.check)).toEqual([check]);
    expect(v.unreadable[0]?.output).not.toBe('');
  });

  it('a driver-610 host with a SUPER card, as Vast names it: fit, read from the KMD banner', async () => {
    const env = await simFitnessEnv(
      simOffer({ gpu_name: 'RTX 4080S', gpu_ram: 16_376, host: { machine: { driverVersion: '610.57.04' } } }),
    );
    const nvidiaSmi = z.array(z.string()).parse(JSON.parse(env.NVIDIA_SMI_CMD ?? '[]'));
    const m = await measureFitness(probes({ nvidiaSmi, sampleUrl: null, paramCacheDir: ownCache() }), input, ctx);
    expect(m).toMatchObject({ smiForm: 'kmd', driverVersion: '610.57.04', cudaVersion: 12.4 });
    expect(m.gpus.map((g) => g.name)).toEqual(['NVIDIA GeForce RTX 4080 SUPER', 'NVIDIA GeForce RTX 4080 SUPER']);
    const v = judgeFitness(m, { gpuName: 'RTX 4080S', numGpus: 2, gpuRamMb: 16_376 }, thisMachine);
    expect(v.outcome).toBe('fit');
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
