import { describe, expect, it } from 'vitest';
import { earlyPromoteEvidence } from '../../workflows/domain/policy/early-promote.js';
import { studentT } from '../../workflows/domain/policy/student-t.js';

const MIN = 60_000;
const base = { requested: 12, concurrency: 2, minRate: 29, confidence: 0.95 as const, minProofs: 3 };

/** Lower bound the test computes for k equal proofs of `ms` (spread at its floor, 0.05). */
function boundFor(k: number, ms: number): number {
  return ms * Math.exp(studentT(0.95, k - 1) * 0.05 * Math.sqrt(1 + 1 / k));
}

describe('early promote: the sequential test', () => {
  it('promotes a host just above the bar and not one just below it, on the same timings', () => {
    // 4 equal proofs of 2 min at 2-way after 4 min: each of the 4 rounds left is charged the bound.
    const totalsMs = [2, 2, 2, 2].map((m) => m * MIN);
    const bound = boundFor(4, 2 * MIN);
    const lower = 12 / ((4 * MIN + 4 * bound) / 3_600_000);
    const e = earlyPromoteEvidence({ ...base, totalsMs, elapsedMs: 4 * MIN });
    expect(e).toMatchObject({ completed: 4, confidence: 0.95, proofBoundMs: Math.round(bound) });
    expect(e?.rateLowerBound).toBeCloseTo(lower, 2);
    expect(earlyPromoteEvidence({ ...base, minRate: lower - 0.01, totalsMs, elapsedMs: 4 * MIN })).not.toBeNull();
    expect(earlyPromoteEvidence({ ...base, minRate: lower + 0.01, totalsMs, elapsedMs: 4 * MIN })).toBeNull();
  });

  it('does not promote a host whose true pace is just above minRate (the bound is pessimistic)', () => {
    // 4.1 min per proof at 2-way is 29.3/h: above 29, but no bound that allows for noise can show it early.
    const totals = [4.1, 4.1, 4.1, 4.1, 4.1, 4.1].map((m) => m * MIN);
    expect(earlyPromoteEvidence({ ...base, totalsMs: totals, elapsedMs: 12.3 * MIN })).toBeNull();
  });

  it('never promotes a host just below the bar, at any point of its batch', () => {
    // 4.2 min per proof at 2-way is 28.6/h, under 29.
    for (let k = 1; k < 12; k++) {
      const totals = Array.from({ length: k }, () => 4.2 * MIN);
      expect(earlyPromoteEvidence({ ...base, totalsMs: totals, elapsedMs: Math.ceil(k / 2) * 4.2 * MIN })).toBeNull();
    }
  });

  it('waits longer on noisy timings with the same mean', () => {
    const quiet = [2.5, 2.5, 2.5, 2.5].map((m) => m * MIN);
    const noisy = [1.5, 3.5, 1.6, 3.4].map((m) => m * MIN);
    expect(earlyPromoteEvidence({ ...base, totalsMs: quiet, elapsedMs: 5 * MIN })).not.toBeNull();
    expect(earlyPromoteEvidence({ ...base, totalsMs: noisy, elapsedMs: 5 * MIN })).toBeNull();
    // More proofs at the same noise narrow the bound: the noisy host is promoted later, not never.
    const moreNoisy = [1.5, 3.5, 1.6, 3.4, 1.5, 3.5, 1.6, 3.4].map((m) => m * MIN);
    expect(earlyPromoteEvidence({ ...base, minRate: 25, totalsMs: moreNoisy, elapsedMs: 10 * MIN })).not.toBeNull();
  });

  it('asks for more evidence at a higher confidence', () => {
    const totals = [3, 3.2, 2.9].map((m) => m * MIN);
    const at = (confidence: 0.9 | 0.95 | 0.99) =>
      earlyPromoteEvidence({ ...base, confidence, totalsMs: totals, elapsedMs: 4.6 * MIN, minRate: 30 });
    expect(at(0.9)).not.toBeNull();
    expect(at(0.99)).toBeNull();
  });

  it('judges only after a full round, and never on a finished batch', () => {
    const fast = (k: number) => Array.from({ length: k }, () => 1 * MIN);
    expect(earlyPromoteEvidence({ ...base, concurrency: 6, totalsMs: fast(5), elapsedMs: 1 * MIN })).toBeNull();
    expect(earlyPromoteEvidence({ ...base, concurrency: 6, totalsMs: fast(6), elapsedMs: 1 * MIN })).not.toBeNull();
    expect(earlyPromoteEvidence({ ...base, totalsMs: fast(12), elapsedMs: 6 * MIN })).toBeNull();
    expect(earlyPromoteEvidence({ ...base, minRate: 0, totalsMs: fast(4), elapsedMs: 2 * MIN })).toBeNull();
  });

  it('bounds a proof by the slowest one seen, never below it', () => {
    const totals = [1, 1, 1, 6].map((m) => m * MIN);
    const e = earlyPromoteEvidence({ ...base, minRate: 1, totalsMs: totals, elapsedMs: 7 * MIN });
    expect(e?.proofBoundMs).toBeGreaterThanOrEqual(6 * MIN);
  });

  it('projects the full batch’s rate from the typical proof and the proofs in flight', () => {
    // 2-way, 100 s proofs: 3 done at 200 s, the 4th in flight since 100 s ends with them: 4 in 200 s = 72/h.
    const p = { ...base, requested: 4, minRate: 20, totalsMs: [100_000, 100_000, 100_000], elapsedMs: 200_000 };
    expect(earlyPromoteEvidence({ ...p, inFlightStartedMs: [100_000] })?.projectedRate).toBe(72);
    // Not knowing when it started, it is charged a whole proof from now: 4 in 300 s.
    expect(earlyPromoteEvidence(p)?.projectedRate).toBe(48);
  });
});
