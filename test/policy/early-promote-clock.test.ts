import { describe, expect, it } from 'vitest';
import { batchFor } from '../../workflows/lifecycle/benchmark.js';
import { judge } from '../../workflows/lifecycle/verdict.js';
import { clockOf, realReport } from '../../workflows/domain/policy/clock.js';
import { withDefaults } from '../../workflows/domain/policy/defaults.js';
import { earlyPromoteEvidence } from '../../workflows/domain/policy/early-promote.js';
import { benchRate } from '../../workflows/domain/policy/early-promote-plan.js';
import type { BenchmarkReport } from '../../workflows/domain/types.js';

/**
 * Early promote against the simulators' compressed clock (SIM_TIME_SCALE=0.01: a 100 s proof takes 1 s).
 * The host judges on its own clock, so the bar it gets must be on that clock, as early stop's is; what it
 * returns comes back through policy/clock.ts, so the projected rate, bound and timings are real.
 */

const SCALE = 0.01;
const MIN = 60_000;
const input = withDefaults({ offerId: 7, minRate: 29, clock: clockOf(SCALE), benchmarkProofs: 12 });
const plan = { concurrency: 2, partitionWorkers: 4, warmupPartitionWorkers: 4 };
const batch = batchFor(input, plan, 2, false);

/** The host's view of a batch at 2-way whose proofs each take `realMin` real minutes, after `k` of them. */
function hostSoFar(realMin: number, k: number) {
  const ms = realMin * MIN * SCALE;
  return {
    totalsMs: Array.from({ length: k }, () => ms),
    requested: 12,
    elapsedMs: Math.ceil(k / 2) * ms,
    concurrency: 2,
  };
}

describe('early promote on the hosts clock', () => {
  it('gives the host its bar in proofs per host-clock hour, the same as early stop', () => {
    expect(batch.earlyStop?.minRate).toBe(2900);
    expect(batch.earlyPromote?.minRate).toBe(batch.earlyStop?.minRate);
  });

  it('never promotes a host below minRate in real units, though its compressed rate is 100x above it', () => {
    // 4.2 real min per proof at 2-way is 28.6 proofs per real hour: under 29.
    const bar = batch.earlyPromote!;
    for (let k = 2; k < 12; k++) expect(earlyPromoteEvidence({ ...hostSoFar(4.2, k), ...bar })).toBeNull();
    // The real-units bar on the host's clock (the bug this guards) would have promoted it.
    expect(earlyPromoteEvidence({ ...hostSoFar(4.2, 4), ...bar, minRate: input.minRate })).not.toBeNull();
  });

  it('brings the evidence back in real units: projected rate, bound, elapsed and bar', () => {
    // 2 real min per proof at 2-way is 60 proofs per real hour.
    const so = hostSoFar(2, 4);
    const evidence = earlyPromoteEvidence({ ...so, ...batch.earlyPromote! });
    expect(evidence).not.toBeNull();
    const host: BenchmarkReport = {
      requested: 12,
      completed: 4,
      elapsedMs: so.elapsedMs,
      concurrency: 2,
      timings: so.totalsMs.map((totalMs, index) => ({ index, totalMs, synthesisMs: 0, gpuComputeMs: totalMs })),
      deadlineReached: false,
      promotedEarly: evidence!,
    };
    const real = realReport(host, input.clock);
    expect(real.promotedEarly).toMatchObject({ completed: 4, requested: 12, elapsedMs: 4 * MIN, minRate: 29 });
    expect(real.promotedEarly!.projectedRate).toBeCloseTo(60, 1);
    expect(real.promotedEarly!.rateLowerBound).toBeGreaterThanOrEqual(29);
    expect(real.promotedEarly!.rateLowerBound).toBeLessThan(60);
    expect(real.promotedEarly!.proofBoundMs).toBeGreaterThanOrEqual(2 * MIN);
    expect(real.promotedEarly!.proofBoundMs).toBeLessThan(3 * MIN);
    // The rate recorded (BenchRate, store, status) and the reason say real proofs/h.
    expect(benchRate(real)).toBeCloseTo(60, 1);
    const verdict = judge(real, benchRate(real), input, null);
    expect(verdict).toMatchObject({ promote: expect.stringMatching(/projected 60 proofs\/h.*>= 29$/) });
  });
});
