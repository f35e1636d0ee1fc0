import { describe, expect, it } from 'vitest';
import { planBenchmark } from '../../workflows/domain/policy/concurrency.js';
import { DEFAULT_CONCURRENCY, withDefaults } from '../../workflows/domain/policy/defaults.js';
import { expectedBatchMs, judgeRate, proofsPerHour } from '../../workflows/domain/policy/rate.js';

const GB = 1024; // Vast RAM fields are MB

describe('planBenchmark reproduces the seeds’ hand-tuned settings', () => {
  it.each([
    ['2x RTX 3090 / 251 GB', 2, 251 * GB, 2, 10],
    ['1x RTX PRO 4000 / 504 GB', 1, 504 * GB, 3, 16],
    ['2x A40 / 2 TB', 2, 2016 * GB, 6, 16],
    ['1x RTX 4090 / 125 GB', 1, 125 * GB, 2, 5],
  ])('%s', (_name, gpus, ramMb, concurrency, workers) => {
    const plan = planBenchmark(gpus, ramMb, DEFAULT_CONCURRENCY);
    expect(plan).toEqual({ concurrency, partitionWorkers: workers, warmupPartitionWorkers: 2 });
  });

  it('never plans below the minimum even on a tiny host', () => {
    expect(planBenchmark(1, 16 * GB, DEFAULT_CONCURRENCY)).toMatchObject({ concurrency: 2, partitionWorkers: 2 });
  });
});

describe('rate policy', () => {
  it('computes proofs per hour from the batch wall time', () => {
    expect(proofsPerHour(12, 20 * 60_000)).toBe(36);
    expect(proofsPerHour(0, 1000)).toBe(0);
    expect(proofsPerHour(5, 0)).toBe(0);
  });
  it('keeps at or above the minimum, kills below it', () => {
    expect(judgeRate(29, 29).keep).toBe(true);
    expect(judgeRate(28.99, 29)).toMatchObject({ keep: false });
  });
  it('expects 12 proofs at 29/h to need ~24.8 minutes', () => {
    expect(Math.round(expectedBatchMs(12, 29) / 60_000)).toBe(25);
  });
});

describe('lifecycle input defaults', () => {
  it('fills production defaults from the seeds', () => {
    const input = withDefaults({ offerId: 1 });
    expect(input.timeouts.benchmarkSec).toBe(45 * 60);
    expect(input.benchmarkProofs).toBe(12);
    expect(input.minRate).toBe(29);
  });
  it.each([
    [{ offerId: 0 }, /offerId/],
    [{ offerId: 1, benchmarkProofs: 0 }, /benchmarkProofs/],
    [{ offerId: 1, minRate: -1 }, /minRate/],
    [{ offerId: 1, timeouts: { benchmarkSec: 0 } }, /timeouts.benchmarkSec/],
  ])('rejects %j naming the field', (req, msg) => {
    expect(() => withDefaults(req)).toThrow(msg);
  });
});
