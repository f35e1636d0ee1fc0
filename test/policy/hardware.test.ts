import { describe, expect, it } from 'vitest';
import {
  effectiveRamMiB,
  parseCgroupLimit,
  parseMeminfo,
  parseNvidiaSmiCsv,
} from '../../activities/gpu-host/hardware.js';

// Output shapes as nvidia-smi prints them for these queries (driver 535/550 series).
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
