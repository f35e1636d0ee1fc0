import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailureType } from '../../workflows/domain/failures.js';
import { hostFailure, type LogicEnv, startLogicEnv } from './harness.js';

// The gate's decisions with every activity a stub (the end-to-end kinds: test/workflows/fitness-gate.test.ts).
let env: LogicEnv;
beforeAll(async () => {
  env = await startLogicEnv();
});
afterAll(async () => env?.close());

describe('the fitness gate in the lifecycle', () => {
  it('runs before paramfetch, and the bench input between them', async () => {
    const run = await env.start({
      host: { paramfetch: () => Promise.reject(hostFailure(FailureType.ParamfetchFailed)) },
    });
    await run.failure();
    const order = run.calls
      .map((c) => c.name)
      .filter((n) => ['checkFitness', 'ensureBenchInput', 'paramfetch'].includes(n));
    expect(order).toEqual(['checkFitness', 'ensureBenchInput', 'paramfetch']);
  });

  it('an unfit host is destroyed before paramfetch, the failure typed with what was measured against what was claimed', async () => {
    const run = await env.start({
      host: {
        checkFitness: async () => ({
          gpus: [{ index: 0, name: 'NVIDIA GeForce RTX 3090', memoryMiB: 24_576 }],
          driverError: null,
          driverVersion: '535.183.01',
          cudaVersion: 12.2,
          disk: { path: '/p', freeBytes: 400 * 2 ** 30, totalBytes: 500 * 2 ** 30 },
          diskWrite: { bytes: 256 * 2 ** 20, ms: 300 },
          download: null,
          elapsedMs: 700,
        }),
      },
    });
    const f = await run.failure();
    expect(f.type).toBe(FailureType.HostUnfit);
    expect(f.details?.[0]).toMatchObject({
      stage: 'fitness',
      unfit: ['gpuCount', 'gpuModel'],
      claimed: { gpuName: 'RTX 4090', numGpus: 2 },
      measured: { gpus: 1, gpuNames: ['NVIDIA GeForce RTX 3090'] },
    });
    expect(run.count('paramfetch')).toBe(0);
    expect(run.count('destroyInstance')).toBe(1);
  });

  it('a missing bench input fails before paramfetch with its own type', async () => {
    const run = await env.start({
      host: { ensureBenchInput: () => Promise.reject(hostFailure(FailureType.BenchInputMissing)) },
    });
    expect((await run.failure()).type).toBe(FailureType.BenchInputMissing);
    expect(run.count('paramfetch')).toBe(0);
    expect(run.count('destroyInstance')).toBe(1);
  });

  it('fitness.enabled false goes straight to paramfetch', async () => {
    const run = await env.start(
      { host: { paramfetch: () => Promise.reject(hostFailure(FailureType.ParamfetchFailed)) } },
      { fitness: { enabled: false } },
    );
    expect((await run.failure()).type).toBe(FailureType.ParamfetchFailed);
    expect(run.count('checkFitness')).toBe(0);
    expect(run.count('ensureBenchInput')).toBe(0);
  });
});
