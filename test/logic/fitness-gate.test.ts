import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markFor } from '../../workflows/domain/policy/bad-machine-rule.js';
import { FailureType } from '../../workflows/domain/failures.js';
import type { FitnessMeasurement } from '../../workflows/domain/policy/fitness.js';
import { healthyMeasurement } from '../helpers/fitness-measurement.js';
import { hostFailure, inputsOf, type LogicEnv, startLogicEnv } from './harness.js';

// The gate's decisions with every activity a stub; what the host measures and how each kind of host is
// judged: test/activities/fitness-probes.test.ts and test/policy/fitness.test.ts.
const measured = (over: Partial<FitnessMeasurement>) => healthyMeasurement({ download: null, ...over });
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
    // A fit host's figures are its lifecycle's `fit` event.
    const fit = inputsOf(run, 'recordEvent').find((e) => e.message === 'fit');
    expect(fit?.details).toMatchObject({
      measured: { gpus: 2, gpuNames: ['NVIDIA GeForce RTX 4090'], smiForm: 'driver', cudaVersion: 12.4 },
      claimed: { gpuName: 'RTX 4090', numGpus: 2 },
    });
  });

  it('an unfit host is destroyed before paramfetch, the failure typed with what was measured against what was claimed', async () => {
    const run = await env.start({
      host: {
        checkFitness: async () =>
          measured({ gpus: [{ index: 0, name: 'NVIDIA GeForce RTX 3090', memoryMiB: 24_576 }], cudaVersion: 12.2 }),
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
    expect(inputsOf(run, 'recordOutcome')[0]).toMatchObject({ failureType: 'HostUnfit' });
    expect(markFor('HostUnfit', 1).mark).toBe(true);
  });

  it('an unreadable host is destroyed before paramfetch, inconclusive, its output in history, the machine unmarked', async () => {
    const output = 'GPU monitoring is provided by the host agent; see /opt/agent/gpu.json';
    const run = await env.start({
      host: {
        checkFitness: async () =>
          measured({
            gpus: [],
            smiForm: null,
            cudaVersion: null,
            driverVersion: null,
            unreadable: [{ probe: 'nvidia-smi', why: 'a banner in neither known form', output }],
          }),
      },
    });
    const f = await run.failure();
    expect(f.type).toBe(FailureType.HostUnreadable);
    expect(f.message).toMatch(/host unreadable: nvidia-smi: a banner in neither known form/);
    expect(f.details?.[0]).toMatchObject({
      stage: 'fitness',
      unreadable: [{ check: 'driver', message: 'nvidia-smi: a banner in neither known form', output }],
      claimed: { gpuName: 'RTX 4090', numGpus: 2 },
    });
    expect(run.count('paramfetch')).toBe(0);
    expect(run.count('destroyInstance')).toBe(1);
    const outcome = inputsOf(run, 'recordOutcome')[0];
    expect(outcome).toMatchObject({ outcome: 'killed', failureType: 'HostUnreadable' });
    // Recorded as inconclusive: the first occurrence marks nothing; a repeat on the machine marks it, expiring.
    expect(markFor(String(outcome?.failureType), 1)).toEqual({ mark: false, expiresInSec: null });
    expect(markFor(String(outcome?.failureType), 2).expiresInSec).toBeGreaterThan(0);
  });

  it('a model that cannot be told is recorded as not judged and the host goes on; a certain mismatch with [N/A] beside is unfit', async () => {
    const unknownModel = await env.start({
      host: {
        checkFitness: async () =>
          measured({ gpus: [0, 1].map((index) => ({ index, name: 'NVIDIA Mystery 9', memoryMiB: 24_564 })) }),
        paramfetch: () => Promise.reject(hostFailure(FailureType.ParamfetchFailed)),
      },
    });
    await unknownModel.failure();
    expect(unknownModel.count('paramfetch')).toBe(1);
    const fit = inputsOf(unknownModel, 'recordEvent').find((e) => e.message === 'fit');
    expect(JSON.stringify(fit?.details)).toContain('gpuModel: cannot tell whether NVIDIA Mystery 9 is a RTX 4090');
    const both = await env.start({
      offer: { gpuRamMb: 24_564 },
      host: {
        checkFitness: async () =>
          measured({
            gpus: [0, 1].map((index) => ({
              index,
              name: 'NVIDIA GeForce RTX 3090',
              memoryMiB: null,
              notGiven: 'memory.total [N/A]',
            })),
          }),
      },
    });
    const f = await both.failure();
    expect(f.type).toBe(FailureType.HostUnfit);
    expect(f.details?.[0]).toMatchObject({ unfit: ['gpuModel'], unreadable: [{ check: 'vram' }] });
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
