import { describe, expect, it } from 'vitest';
import { cannotReachMinRate } from '../../workflows/domain/policy/early-stop.js';

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
