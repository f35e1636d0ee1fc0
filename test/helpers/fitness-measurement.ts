import type { FitnessMeasurement } from '../../workflows/domain/policy/fitness.js';

const GIB = 2 ** 30;

/** What a healthy 2x RTX 4090 host measures at the gate (the tests' offer), with `over` in its place. */
export function healthyMeasurement(over: Partial<FitnessMeasurement> = {}): FitnessMeasurement {
  return {
    gpus: [0, 1].map((index) => ({ index, name: 'NVIDIA GeForce RTX 4090', memoryMiB: 24_564 })),
    driverError: null,
    driverVersion: '550.54.14',
    cudaVersion: 12.4,
    smiForm: 'driver',
    unreadable: [],
    disk: { path: '/params', freeBytes: 190 * GIB, totalBytes: 200 * GIB },
    // 256 MiB in 0.5 s = 537 MB/s
    diskWrite: { bytes: 256 * 2 ** 20, ms: 500 },
    // 64 MiB in 1 s = 537 Mb/s
    download: { url: 'http://x/s', bytes: 64 * 2 ** 20, ms: 1000 },
    elapsedMs: 1800,
    ...over,
  };
}
