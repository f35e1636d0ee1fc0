import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../workflows/domain/policy/defaults.js';
import { healthyMeasurement } from '../helpers/fitness-measurement.js';
import {
  type FitnessMeasurement,
  FitnessPolicySchema,
  judgeFitness,
  resolveFitness,
} from '../../workflows/domain/policy/fitness.js';
import { GPU_NAME_SOURCES, GPU_NAMES, gpuModelVerdict, vastNamesFor } from '../../workflows/domain/policy/gpu-names.js';

const policy = FitnessPolicySchema.parse({});
const GIB = 2 ** 30;
const offer = { gpuName: 'RTX 4090', numGpus: 2, gpuRamMb: 24_564 };

const healthy = healthyMeasurement;

const checks = (m: FitnessMeasurement, o = offer) => judgeFitness(m, o, policy).problems.map((p) => p.check);

describe('fitness judgement', () => {
  it('passes a host that is what the offer says, with figures in real units', () => {
    const v = judgeFitness(healthy(), offer, policy);
    expect(v.outcome).toBe('fit');
    expect(v.figures).toEqual({
      gpus: 2,
      gpuNames: ['NVIDIA GeForce RTX 4090'],
      minVramMiB: 24_564,
      driverVersion: '550.54.14',
      smiForm: 'driver',
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
    // "CUDA Version: N/A" is the driver's own word that it offers no CUDA: evidence, unfit.
    expect(checks(healthy({ cudaVersion: null }))).toEqual(['cuda']);
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
    expect(judgeFitness(healthy({ download: null }), offer, policy)).toMatchObject({ outcome: 'fit' });
    const v = judgeFitness(
      healthy({ download: { url: 'u', error: 'sample URL answered HTTP 404', ours: true } }),
      offer,
      policy,
    );
    expect(v.outcome).toBe('fit');
    expect(v.notJudged).toEqual(['download: sample URL answered HTTP 404']);
    expect(checks(healthy({ download: { url: 'u', error: 'ECONNRESET', ours: false } }))).toEqual(['download']);
  });

  it('an offer without gpu_ram leaves VRAM unjudged and says so', () => {
    const v = judgeFitness(healthy(), { gpuName: 'RTX 4090', numGpus: 2 }, policy);
    expect(v.outcome).toBe('fit');
    expect(v.notJudged[0]).toMatch(/vram/);
  });
});

describe('unfit (evidence against the host) against unreadable (what we could not read)', () => {
  const naVram = healthy().gpus.map((g) => ({ ...g, memoryMiB: null, notGiven: 'memory.total [N/A]' }));

  it('[N/A] in a field the offer claims is unreadable, with nvidia-smi’s output; unclaimed it is not judged', () => {
    const v = judgeFitness(
      healthy({ gpus: naVram, smiOutput: '0, NVIDIA GeForce RTX 4090, [N/A], GPU-0' }),
      offer,
      policy,
    );
    expect(v.outcome).toBe('unreadable');
    expect(v.problems).toEqual([]);
    expect(v.unreadable).toEqual([
      {
        check: 'vram',
        message: 'nvidia-smi gave no memory.total for GPU 0: memory.total [N/A], GPU 1: memory.total [N/A]',
        output: '0, NVIDIA GeForce RTX 4090, [N/A], GPU-0',
      },
    ]);
    const unclaimed = judgeFitness(healthy({ gpus: naVram }), { gpuName: 'RTX 4090', numGpus: 2 }, policy);
    expect(unclaimed.outcome).toBe('fit');
    const noName = healthy().gpus.map((g) => ({ ...g, name: null, notGiven: 'name [N/A]' }));
    expect(judgeFitness(healthy({ gpus: noName }), offer, policy).unreadable.map((u) => u.check)).toEqual(['gpuModel']);
  });

  it('an nvidia-smi we could not run or read is unreadable, and its GPUs are not counted against the host', () => {
    const v = judgeFitness(
      healthy({
        gpus: [],
        smiForm: null,
        cudaVersion: null,
        unreadable: [{ probe: 'nvidia-smi', why: 'a banner in neither known form', output: 'GPU agent' }],
      }),
      offer,
      policy,
    );
    expect(v.outcome).toBe('unreadable');
    expect(v.problems).toEqual([]);
    expect(v.unreadable).toEqual([
      { check: 'driver', message: 'nvidia-smi: a banner in neither known form', output: 'GPU agent' },
    ]);
  });

  it('evidence wins: an unfit host with an unreadable probe is unfit, the unreadable listed beside', () => {
    const v = judgeFitness(
      healthy({
        disk: null,
        unreadable: [{ probe: 'disk-free', why: 'exit 1 at /params', output: 'df: /params: No such file' }],
        download: { url: 'u', bytes: 2 ** 20, ms: 10_000 },
      }),
      offer,
      policy,
    );
    expect(v.outcome).toBe('unfit');
    expect(v.problems.map((p) => p.check)).toEqual(['download']);
    expect(v.unreadable.map((u) => u.check)).toEqual(['diskFree']);
  });

  it('a model the table cannot tell is not judged, recorded; never a kill', () => {
    const gpus = healthy().gpus.map((g) => ({ ...g, name: 'NVIDIA GeForce RTX 4090 X' }));
    const v = judgeFitness(healthy({ gpus }), offer, policy);
    expect(v.outcome).toBe('fit');
    expect(v.notJudged).toEqual([
      'gpuModel: cannot tell whether NVIDIA GeForce RTX 4090 X is a RTX 4090 (names not in gpu-names.ts)',
    ]);
  });
});

describe('GPU model names: nvidia-smi against Vast (gpu-names.ts)', () => {
  it.each([
    ['NVIDIA H100 80GB HBM3', 'H100 SXM', 'match'],
    ['NVIDIA H100 80GB HBM3', 'H100 PCIE', 'mismatch'],
    ['NVIDIA GeForce RTX 4080 SUPER', 'RTX 4080S', 'match'],
    ['NVIDIA GeForce RTX 4080 SUPER', 'RTX 4080', 'mismatch'],
    ['NVIDIA GeForce RTX 2080 SUPER', 'RTX 2080S', 'match'],
    ['Quadro RTX 4000', 'Q RTX 4000', 'match'],
    ['NVIDIA RTX 6000 Ada Generation', 'RTX 6000Ada', 'match'],
    ['NVIDIA RTX 6000 Ada Generation', 'Q RTX 6000', 'mismatch'],
    ['NVIDIA A100 80GB PCIe', 'A100 PCIE', 'match'],
    ['NVIDIA A100-PCIE-40GB', 'A100 PCIE', 'match'],
    ['NVIDIA A100-SXM4-80GB', 'A100 SXM', 'match'],
    ['NVIDIA A100 80GB PCIe', 'A100 SXM4', 'mismatch'],
    ['NVIDIA H100 NVL', 'H100 NVL', 'match'],
    ['NVIDIA GeForce RTX 4090 D', 'RTX 4090D', 'match'],
    ['NVIDIA GeForce RTX 4090 D', 'RTX 4090', 'mismatch'],
    ['NVIDIA GeForce RTX 3090 Ti', 'RTX 3090', 'mismatch'],
    ['NVIDIA GeForce RTX 4070 Ti SUPER', 'RTX 4070S Ti', 'match'],
    ['NVIDIA RTX PRO 6000 Blackwell Server Edition', 'RTX PRO 6000 S', 'match'],
    ['NVIDIA RTX PRO 6000 Blackwell Server Edition', 'RTX PRO 6000', 'match'],
    ['NVIDIA RTX PRO 6000 Blackwell Server Edition', 'RTX PRO 6000 WS', 'mismatch'],
    // Drivers before R470 left "NVIDIA " off.
    ['GeForce RTX 3090', 'RTX 3090', 'match'],
    ['NVIDIA GeForce RTX 5090 D v2', 'RTX 5090', 'unknown'],
    ['NVIDIA GeForce RTX 4090', 'RTX 4090 Ti', 'unknown'],
    ['NVIDIA GeForce RTX 4090', 'RX 7900 XTX', 'unknown'],
    ['NVIDIA GeForce RTX 4090', 'RTX 9090', 'unknown'],
  ] as const)('%s is a %s: %s', (smi, vast, verdict) => {
    expect(gpuModelVerdict(smi, vast)).toBe(verdict);
  });

  it('walks every gpu_name the table knows: each nvidia-smi name is its model and no other', () => {
    expect(new Set(GPU_NAMES.map((r) => r.vast)).size).toBe(GPU_NAMES.length);
    for (const row of GPU_NAMES) {
      expect(row.src[0], row.vast).toBe('vastList');
      for (const s of row.src) expect(Object.keys(GPU_NAME_SOURCES), row.vast).toContain(s);
      for (const smi of row.smi) {
        expect(gpuModelVerdict(smi, row.vast), `${smi} / ${row.vast}`).toBe('match');
        const owners = vastNamesFor(smi);
        for (const other of GPU_NAMES.filter((r) => r.smi.length > 0)) {
          expect(gpuModelVerdict(smi, other.vast), `${smi} / ${other.vast}`).toBe(
            owners.includes(other.vast) ? 'match' : 'mismatch',
          );
        }
      }
      if (row.smi.length === 0) expect(gpuModelVerdict('NVIDIA GeForce RTX 4090', row.vast)).toBe('unknown');
    }
  });

  it('spells Vast’s short forms out as nvidia-smi does: S, Q, Ada, D', () => {
    for (const row of GPU_NAMES) {
      if (/^(RTX|GTX) \d{4}S( Ti)?$|^GTX \d{4} S$/.test(row.vast)) expect(row.smi.join()).toMatch(/ SUPER$/);
      if (row.vast.startsWith('Q RTX ')) expect(row.smi).toEqual([row.vast.replace(/^Q /, 'Quadro ')]);
      if (/\dAda$/.test(row.vast)) for (const s of row.smi) expect(s).toMatch(/ Ada Generation$/);
      if (/\dD$/.test(row.vast)) expect(row.smi).toEqual([`NVIDIA GeForce ${row.vast.replace(/D$/, ' D')}`]);
    }
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
