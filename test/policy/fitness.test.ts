import { describe, expect, it } from 'vitest';
import { parseNvidiaSmiBanner } from '../../activities/gpu-host/hardware.js';
import { withDefaults } from '../../workflows/domain/policy/defaults.js';
import {
  type FitnessMeasurement,
  FitnessPolicySchema,
  gpuModelMatches,
  judgeFitness,
  resolveFitness,
} from '../../workflows/domain/policy/fitness.js';

const policy = FitnessPolicySchema.parse({});
const GIB = 2 ** 30;
const offer = { gpuName: 'RTX 4090', numGpus: 2, gpuRamMb: 24_564 };

function healthy(over: Partial<FitnessMeasurement> = {}): FitnessMeasurement {
  return {
    gpus: [0, 1].map((index) => ({ index, name: 'NVIDIA GeForce RTX 4090', memoryMiB: 24_564 })),
    driverError: null,
    driverVersion: '550.54.14',
    cudaVersion: 12.4,
    disk: { path: '/params', freeBytes: 190 * GIB, totalBytes: 200 * GIB },
    // 256 MiB in 0.5 s = 537 MB/s
    diskWrite: { bytes: 256 * 2 ** 20, ms: 500 },
    // 64 MiB in 1 s = 537 Mb/s
    download: { url: 'http://x/s', bytes: 64 * 2 ** 20, ms: 1000 },
    elapsedMs: 1800,
    ...over,
  };
}

const checks = (m: FitnessMeasurement, o = offer) => judgeFitness(m, o, policy).problems.map((p) => p.check);

describe('fitness judgement', () => {
  it('passes a host that is what the offer says, with figures in real units', () => {
    const v = judgeFitness(healthy(), offer, policy);
    expect(v.fit).toBe(true);
    expect(v.figures).toEqual({
      gpus: 2,
      gpuNames: ['NVIDIA GeForce RTX 4090'],
      minVramMiB: 24_564,
      cudaVersion: 12.4,
      freeDiskGiB: 190,
      diskWriteMBps: 536.9,
      downloadMbps: 536.9,
    });
  });

  it('catches each lie and each weakness on its own, with measured against required', () => {
    expect(checks(healthy({ gpus: healthy().gpus.slice(0, 1) }))).toEqual(['gpuCount']);
    expect(checks(healthy({ gpus: healthy().gpus.map((g) => ({ ...g, name: 'NVIDIA GeForce RTX 3090' })) }))).toEqual([
      'gpuModel',
    ]);
    expect(checks(healthy({ gpus: healthy().gpus.map((g) => ({ ...g, memoryMiB: 12_288 })) }))).toEqual(['vram']);
    expect(checks(healthy({ cudaVersion: 11.8 }))).toEqual(['cuda']);
    expect(checks(healthy({ disk: { path: '/p', freeBytes: 40 * GIB, totalBytes: 200 * GIB } }))).toEqual(['diskFree']);
    expect(checks(healthy({ diskWrite: { bytes: 20 * 2 ** 20, ms: 10_000 } }))).toEqual(['diskWrite']);
    expect(checks(healthy({ download: { url: 'u', bytes: 2 ** 20, ms: 10_000 } }))).toEqual(['download']);
    const vram = judgeFitness(
      healthy({ gpus: [{ index: 0, name: 'NVIDIA GeForce RTX 4090', memoryMiB: 12_288 }] }),
      offer,
      policy,
    );
    expect(vram.problems.find((p) => p.check === 'vram')).toMatchObject({
      measured: 12_288,
      required: 23_335,
      unit: 'MiB',
    });
    expect(vram.problems.find((p) => p.check === 'gpuCount')).toMatchObject({ measured: 1, required: 2, unit: 'GPUs' });
  });

  it('a broken driver is one problem, not a list of missing GPUs', () => {
    const v = judgeFitness(
      healthy({
        gpus: [],
        cudaVersion: null,
        driverVersion: null,
        driverError: "exit 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver",
      }),
      offer,
      policy,
    );
    expect(v.problems.map((p) => p.check)).toEqual(['driver']);
    expect(v.problems[0]?.message).toContain("couldn't communicate with the NVIDIA driver");
  });

  it('VRAM within the tolerance passes (nvidia-smi MiB against Vast MB)', () => {
    expect(checks(healthy({ gpus: healthy().gpus.map((g) => ({ ...g, memoryMiB: 24_000 })) }))).toEqual([]);
  });

  it('our own failures are not judged against the host: no sample URL, a sample URL that answers 404', () => {
    expect(judgeFitness(healthy({ download: null }), offer, policy)).toMatchObject({ fit: true });
    const v = judgeFitness(
      healthy({ download: { url: 'u', error: 'sample URL answered HTTP 404', ours: true } }),
      offer,
      policy,
    );
    expect(v.fit).toBe(true);
    expect(v.notJudged).toEqual(['download: sample URL answered HTTP 404']);
    expect(checks(healthy({ download: { url: 'u', error: 'ECONNRESET', ours: false } }))).toEqual(['download']);
  });

  it('an offer without gpu_ram leaves VRAM unjudged and says so', () => {
    const v = judgeFitness(healthy(), { gpuName: 'RTX 4090', numGpus: 2 }, policy);
    expect(v.fit).toBe(true);
    expect(v.notJudged[0]).toMatch(/vram/);
  });
});

describe('GPU model names: nvidia-smi against Vast', () => {
  it.each([
    ['NVIDIA GeForce RTX 4090', 'RTX 4090', true],
    ['NVIDIA A40', 'A40', true],
    ['NVIDIA RTX A6000', 'RTX A6000', true],
    ['NVIDIA A100-PCIE-40GB', 'A100 PCIE', true],
    ['NVIDIA GeForce RTX 3090 Ti', 'RTX 3090', false],
    ['NVIDIA GeForce RTX 4090 D', 'RTX 4090', false],
    ['NVIDIA GeForce RTX 4080 SUPER', 'RTX 4080', false],
    ['NVIDIA GeForce RTX 3090', 'RTX 4090', false],
    ['NVIDIA GeForce RTX 3090', 'RTX 3090 Ti', false],
  ])('%s is a %s: %s', (smi, vast, match) => {
    expect(gpuModelMatches(smi, vast)).toBe(match);
  });
});

describe('nvidia-smi banner', () => {
  it('reads driver and CUDA versions', () => {
    const banner = `+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+`;
    expect(parseNvidiaSmiBanner(banner)).toEqual({ driverVersion: '550.54.14', cudaVersion: 12.4 });
    expect(parseNvidiaSmiBanner('garbage')).toEqual({ driverVersion: null, cudaVersion: null });
  });
});

describe('fitness thresholds are lifecycle input', () => {
  it('defaults come from the reference and are overridable', () => {
    const input = withDefaults({ offerId: 1, fitness: { minFreeDiskGiB: 20 } });
    expect(input.fitness).toMatchObject({
      enabled: true,
      minFreeDiskGiB: 20,
      minDownloadMbps: 320,
      minDiskWriteMBps: 50,
    });
    expect(input.benchInput).toEqual({ url: null, sha256: null, stallSec: 60 });
  });

  it('refuses bad values with the field named', () => {
    expect(() => withDefaults({ offerId: 1, fitness: { minFreeDiskGiB: -1 } })).toThrow(/fitness: minFreeDiskGiB/);
    expect(() => resolveFitness({}, { url: 'not a url' })).toThrow(/benchInput: url/);
    expect(() => resolveFitness({}, { url: 'https://example.org/c1.json' })).toThrow(/sha256 is required/);
    expect(() => resolveFitness({}, { url: 'https://e.org/c1.json', sha256: 'ABC' })).toThrow(/benchInput: sha256/);
  });
});
