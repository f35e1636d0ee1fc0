import { describe, expect, it } from 'vitest';
import {
  effectiveRamMiB,
  parseCgroupLimit,
  parseMeminfo,
  parseNvidiaSmiCsv,
} from '../../activities/gpu-host/hardware.js';
import { readSmiBanner, readSmiQuery, smiFailure, smiQueryFields } from '../../activities/gpu-host/nvidia-smi.js';
import { smiFixtures } from '../helpers/smi-fixtures.js';

// detect-hardware's query as nvidia-smi prints it (driver 535/550 series); the gate's reader: below.
const TWO_A40 = `0, NVIDIA A40, 46068, GPU-5f1c2a8e-0d2b-8a3e-6f3c-2b0a4c9d7e11
1, NVIDIA A40, 46068, GPU-9b7d4e21-37c1-1f0a-c2d8-71e6a0b5f442
`;
const WITH_HEADER_AND_UNITS = `index, name, memory.total [MiB]
0, NVIDIA GeForce RTX 4090, 24564 MiB
`;
const MEMINFO = `MemTotal:       263786412 kB
MemFree:        12345678 kB
MemAvailable:   200000000 kB
`;

describe('hardware detection parsing', () => {
  it('reads GPUs from nvidia-smi csv output', () => {
    expect(parseNvidiaSmiCsv(TWO_A40)).toEqual([
      { index: 0, name: 'NVIDIA A40', memoryMiB: 46068, uuid: 'GPU-5f1c2a8e-0d2b-8a3e-6f3c-2b0a4c9d7e11' },
      { index: 1, name: 'NVIDIA A40', memoryMiB: 46068, uuid: 'GPU-9b7d4e21-37c1-1f0a-c2d8-71e6a0b5f442' },
    ]);
    expect(parseNvidiaSmiCsv(WITH_HEADER_AND_UNITS)).toEqual([
      { index: 0, name: 'NVIDIA GeForce RTX 4090', memoryMiB: 24564 },
    ]);
    expect(parseNvidiaSmiCsv('')).toEqual([]);
  });

  it('names the bad line when nvidia-smi prints an error instead', () => {
    expect(() =>
      parseNvidiaSmiCsv("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."),
    ).toThrow(/unparseable nvidia-smi line/);
  });

  it('takes the container limit over the host RAM', () => {
    expect(parseMeminfo(MEMINFO)).toBe(257603);
    expect(parseCgroupLimit('max\n')).toBeNull();
    expect(parseCgroupLimit('9223372036854771712')).toBeNull();
    expect(parseCgroupLimit(String(128 * 2 ** 30))).toBe(131072);
    expect(effectiveRamMiB(MEMINFO, String(128 * 2 ** 30))).toBe(131072);
    expect(effectiveRamMiB(MEMINFO, null)).toBe(257603);
    expect(() => parseMeminfo('nothing')).toThrow(/MemTotal/);
  });
});

describe('nvidia-smi as real hosts print it (test/fixtures/nvidia-smi)', () => {
  const fixtures = smiFixtures();
  const answered = fixtures.filter((f) => f.banner.exitCode === 0 && f.expect.form !== undefined);

  it('has a fixture of each form, each naming its source', () => {
    const names = fixtures.map((f) => f.name);
    for (const n of ['rtx2080super-610', 'h100-sxm-590', 'h100-sxm-x8-590', 'query-not-available', 'no-driver'])
      expect(names).toContain(n);
    for (const n of ['driver-mismatch', 'no-devices', 'gpu-lost', 'cuda-not-available', 'unknown-banner'])
      expect(names).toContain(n);
  });

  it.each(answered.map((f) => [f.name, f] as const))('%s: the banner in its form', (_n, f) => {
    const b = readSmiBanner(f.banner.stdout);
    expect(b?.form).toBe(f.expect.form);
    expect(b?.driverVersion).toBe(f.expect.driverVersion);
    expect(b?.cudaVersion).toBe(f.expect.cudaVersion === null ? 'N/A' : f.expect.cudaVersion);
  });

  it.each(answered.map((f) => [f.name, f] as const))('%s: the query, field by field', (_n, f) => {
    const rows = readSmiQuery(f.query?.stdout ?? '', smiQueryFields(f.expect.form ?? 'driver'));
    expect(rows.map((r) => r.name)).toEqual(f.expect.gpus?.map((g) => g.name));
    expect(rows.map((r) => r.index)).toEqual(f.expect.gpus?.map((g) => String(g.index)));
  });

  it('reads the 610 banner (KMD Version, CUDA UMD Version) and asks kmd_version only of it', () => {
    const b = readSmiBanner(fixtures.find((f) => f.name === 'rtx2080super-610')?.banner.stdout ?? '');
    expect(b).toEqual({ form: 'kmd', driverVersion: '610.57.04', cudaVersion: 13.3 });
    expect(smiQueryFields('kmd')).toContain('kmd_version');
    expect(smiQueryFields('driver')).not.toContain('kmd_version');
  });

  it("gives [N/A] and [Not Supported] fields as missing, in nvidia-smi's words", () => {
    const f = fixtures.find((x) => x.name === 'query-not-available');
    const [row] = readSmiQuery(f?.query?.stdout ?? '', smiQueryFields('driver'));
    expect(row?.['memory.total']).toEqual({ missing: '[N/A]' });
    expect(row?.driver_version).toEqual({ missing: '[Not Supported]' });
    expect(row?.name).toBe('NVIDIA GeForce RTX 4080 SUPER');
  });

  it('refuses a row that is not what was asked for, naming it', () => {
    expect(() => readSmiQuery('0, NVIDIA A40, 46068\n', smiQueryFields('driver'))).toThrow(/has 3 fields, 5 asked/);
    expect(readSmiBanner('GPU monitoring is provided by the host agent')).toBeNull();
  });

  it.each(fixtures.filter((f) => f.expect.driverError).map((f) => [f.name, f] as const))(
    '%s: a failure nvidia-smi documents, told from its output',
    (_n, f) => {
      expect(smiFailure(f.banner.stdout + f.banner.stderr)).toBe(f.expect.driverError);
    },
  );

  it('does not call output it does not know a failure of the host', () => {
    expect(smiFailure('Segmentation fault (core dumped)')).toBeNull();
    expect(smiFailure('GPU monitoring is provided by the host agent')).toBeNull();
  });
});
