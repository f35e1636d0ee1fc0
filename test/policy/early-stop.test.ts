import { describe, expect, it } from 'vitest';
import { FailureType } from '../../workflows/domain/failures.js';
import { withDefaults } from '../../workflows/domain/policy/defaults.js';
import {
  cannotReachMinRate,
  pipelineFillMs,
  steadyRate,
  slotCeilingRate,
  sustainableRate,
} from '../../workflows/domain/policy/early-stop.js';
import type { BenchmarkReport } from '../../workflows/domain/types.js';
import { judge } from '../../workflows/lifecycle/verdict.js';

const base = { requested: 12, concurrency: 2, minRate: 29, minProofs: 2 };
const MIN = 60_000;

describe('early stop', () => {
  it('stops a host that cannot reach minRate even at its best pace', () => {
    // 4 proofs in 30 min at 7.5 min each: best case 8 more in 30 min -> 12 in 60 min = 12/h < 29.
    expect(cannotReachMinRate({ ...base, completed: 4, elapsedMs: 30 * MIN, fastestProofMs: 7.5 * MIN })).toBe(true);
  });

  it('keeps a healthy host: 36/h pace', () => {
    expect(cannotReachMinRate({ ...base, completed: 4, elapsedMs: 6.7 * MIN, fastestProofMs: 3.3 * MIN })).toBe(false);
  });

  it('counts proofs in flight as possibly done: a 6-way host near the end is not killed', () => {
    // 10 of 12 in 20 min at 6-way: the last 2 are in flight, so the best case is 12 in 20 min = 36/h.
    expect(
      cannotReachMinRate({ ...base, concurrency: 6, completed: 10, elapsedMs: 20 * MIN, fastestProofMs: 9 * MIN }),
    ).toBe(false);
  });

  it('never judges before minProofs, or once the batch is complete', () => {
    expect(cannotReachMinRate({ ...base, completed: 1, elapsedMs: 60 * MIN, fastestProofMs: 60 * MIN })).toBe(false);
    expect(cannotReachMinRate({ ...base, completed: 12, elapsedMs: 600 * MIN, fastestProofMs: 60 * MIN })).toBe(false);
  });

  it('credits a fast pace after a slow start (best case, not average)', () => {
    // Slow first proofs (kernel warm-up) but now 2 min per proof: 8 more take 8 min -> 12 in 28 min = 25.7/h.
    expect(cannotReachMinRate({ ...base, completed: 4, elapsedMs: 20 * MIN, fastestProofMs: 2 * MIN })).toBe(true);
    expect(cannotReachMinRate({ ...base, completed: 4, elapsedMs: 14 * MIN, fastestProofMs: 2 * MIN })).toBe(false);
  });
});

describe('early stop on the GPU ceiling', () => {
  const slow = { ...base, minProofs: 3, concurrency: 1, elapsedMs: 9 * MIN, fastestProofMs: 9 * MIN };
  it('stops after one proof when the GPUs clearly cannot reach minRate', () => {
    // 1 GPU, 225 s of GPU time per proof: at most 16/h, far below 29.
    expect(cannotReachMinRate({ ...slow, completed: 1, fastestGpuMs: 225_000, gpus: 1 })).toBe(true);
  });

  it('needs a second proof to stop on a narrow miss, and never stops a host whose GPUs can keep up', () => {
    // 1 GPU at 130.5 s: 27.6/h, within 10 % of 29: one proof is not enough, two are.
    expect(cannotReachMinRate({ ...slow, completed: 1, fastestGpuMs: 130_500, gpus: 1 })).toBe(false);
    expect(cannotReachMinRate({ ...slow, completed: 2, fastestGpuMs: 130_500, gpus: 1 })).toBe(true);
    // The same GPU time on 2 GPUs: 55/h, and the pace rule has not had its 3 proofs yet.
    expect(cannotReachMinRate({ ...slow, completed: 2, fastestGpuMs: 130_500, gpus: 2 })).toBe(false);
  });

  it('ignores an unknown GPU time', () => {
    expect(cannotReachMinRate({ ...slow, completed: 1, fastestGpuMs: 0, gpus: 1 })).toBe(false);
    expect(cannotReachMinRate({ ...slow, completed: 1, fastestGpuMs: 225_000 })).toBe(false);
  });
});

/**
 * A GPU-bound 2x RTX 3060 (the evaluator's seed 1, offer 40000185): 543.2 s proofs of which 244.4 s on a
 * GPU, 6 callers, 12 proofs. Its GPUs sustain 2 x 3600 / 244.418 = 29.46/h, but the batch waits 298.7 s
 * for its first synthesis before either GPU works: 12 proofs in 1765.2 s = 24.47/h, under minRate 29.
 */
const rtx3060x2 = { gpus: 2, fastestProofMs: 543_152, fastestGpuMs: 244_418, concurrency: 6 };

describe("the pipeline's fill, refunded", () => {
  it('is the fastest proof less the fastest GPU time, and nothing without a GPU time', () => {
    expect(pipelineFillMs(543_152, 244_418)).toBe(298_734);
    expect(pipelineFillMs(543_152, 0)).toBe(0);
    expect(pipelineFillMs(Infinity, 244_418)).toBe(0);
  });

  it("gives the rate a host sustains: 12 in 1765.2 s less 298.7 s = 29.46/h, never over the GPUs' ceiling", () => {
    expect(steadyRate(12, 1_765_243, 298_734)).toBeCloseTo(29.458, 3);
    expect(sustainableRate({ ...rtx3060x2, completed: 12, elapsedMs: 1_765_243 })).toBeCloseTo(29.458, 3);
    // One GPU: its ceiling of 3600 / 244.418 = 14.73/h bounds it.
    expect(sustainableRate({ ...rtx3060x2, gpus: 1, completed: 12, elapsedMs: 1_765_243 })).toBeCloseTo(14.729, 3);
    // A batch slow beyond its fill: 12 proofs of 100 s (60 s on a GPU) in an hour is 12 / 3560 s = 12.13/h.
    const slow = {
      completed: 12,
      elapsedMs: 3_600_000,
      fastestProofMs: 100_000,
      fastestGpuMs: 60_000,
      gpus: 2,
      concurrency: 2,
    };
    expect(sustainableRate(slow)).toBeCloseTo(12.135, 3);
    expect(sustainableRate({ ...slow, completed: 0 })).toBeNull();
  });

  it('never over what its proofs in flight can finish: the fill is refunded only while they keep the GPUs busy', () => {
    // 2 proofs of 1000 s (450 s on a GPU) at once on 2 GPUs: 7.2/h over the batch; refunded 16/h, the GPUs'
    // ceiling 16/h, but 2 slots each holding a proof 1000 s finish 7.2/h at most.
    expect(slotCeilingRate(1_000_000, 2)).toBeCloseTo(7.2, 6);
    const synthBound = {
      completed: 2,
      elapsedMs: 1_000_000,
      fastestProofMs: 1_000_000,
      fastestGpuMs: 450_000,
      gpus: 2,
    };
    expect(sustainableRate({ ...synthBound, concurrency: 2 })).toBeCloseTo(7.2, 6);
    // The 3060's 6 slots finish up to 6 x 3600 / 543.152 s = 39.77/h: its GPUs bind, 29.46/h.
    expect(slotCeilingRate(543_152, 6)).toBeCloseTo(39.768, 3);
    expect(slotCeilingRate(543_152, 0)).toBeNull();
  });

  it('does not stop a batch held under minRate only by its fill', () => {
    // 9 of 12 done at 1520.8 s, 3 in flight: at best 12 in 1520.8 s = 28.4/h < 29, but 12 in
    // 1520.8 - 298.7 s = 35.4/h once the fill is refunded: the batch goes on.
    const at9 = { ...base, ...rtx3060x2, concurrency: 6, minProofs: 7, completed: 9, elapsedMs: 1_520_824 };
    expect(cannotReachMinRate(at9)).toBe(false);
    // 7.5 min proofs with 1 min on a GPU: 4 in 30 min, 12 in 60 min at best, 12 in 53.5 min refunded = 13.5/h.
    const cpuBound = { ...base, gpus: 2, fastestProofMs: 7.5 * MIN, fastestGpuMs: 1 * MIN };
    expect(cannotReachMinRate({ ...cpuBound, completed: 4, elapsedMs: 30 * MIN })).toBe(true);
  });
});

describe('the verdict on a batch under minRate', () => {
  const input = withDefaults({ offerId: 40000185, minRate: 29 });
  const totals = [543_152, 543_152, 787_570, 787_570, 1_031_988, 1_031_988, ...Array(6).fill(733_255)];
  const batch: BenchmarkReport = {
    requested: 12,
    completed: 12,
    elapsedMs: 1_765_243,
    concurrency: 6,
    deadlineReached: false,
    timings: totals.map((totalMs: number, index) => ({
      index,
      totalMs,
      synthesisMs: totalMs - 244_418,
      gpuComputeMs: 244_418,
    })),
  };

  it('promotes a host under it only for filling its pipeline, judged by the dollar at its sustained rate', () => {
    const v = judge(batch, 24.47, input, null, 2);
    expect(v).toMatchObject({ restartDaemonFirst: false });
    if (!('promote' in v)) throw new Error('expected a promotion');
    expect(v.keepAtRate).toBeCloseTo(29.458, 3);
    expect(v.promote).toBe(
      '24.47 proofs/h over the batch is under the minimum of 29 only for filling its pipeline: ' +
        '29.46 proofs/h once full, no evidence the host is slow',
    );
  });

  it('kills it when it could not sustain minRate either: its GPUs too few, or the bar over 29.46', () => {
    // 1 GPU: a ceiling of 14.73/h.
    const one = judge(batch, 24.47, input, null, 1);
    expect('kill' in one && one.kill.type).toBe(FailureType.BenchRateBelowMin);
    const higher = judge(batch, 24.47, withDefaults({ offerId: 40000185, minRate: 30 }), null, 2);
    expect('kill' in higher && higher.kill.message).toBe('24.47 proofs/h is below the minimum of 30');
  });
});
