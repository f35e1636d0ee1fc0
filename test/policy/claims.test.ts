import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ceilingRate,
  checkBounds,
  describeImplausible,
  implausibleEvidence,
  minProofSec,
  PLAUSIBILITY_BOUNDS,
} from '../../workflows/domain/policy/claims.js';
import { clockOf, realRate, realReport } from '../../workflows/domain/policy/clock.js';
import type { BenchmarkReport, ProofTiming } from '../../workflows/domain/types.js';

const timing = (index: number, totalMs: number): ProofTiming => ({
  index,
  totalMs,
  synthesisMs: Math.round(totalMs * 0.55),
  gpuComputeMs: Math.round(totalMs * 0.45),
});
/** 12 proofs around `ms`, spread a few percent as real proofs are. */
const realistic = (ms: number) =>
  Array.from({ length: 12 }, (_, i) => timing(i, Math.round(ms * (0.97 + (i % 5) * 0.015))));

/** A full batch of these proofs, as a host reports it. */
const batch = (timings: ProofTiming[]): BenchmarkReport => ({
  requested: timings.length,
  completed: timings.length,
  elapsedMs: timings.reduce((s, t) => s + t.totalMs, 0),
  concurrency: 1,
  timings,
  deadlineReached: false,
});

describe('plausibility bounds (workflows/domain/policy/plausibility-bounds.json)', () => {
  it('is a well-formed table: positive seconds per proof per model, a loosest bound for unknown models', () => {
    const raw: unknown = JSON.parse(
      readFileSync(new URL('../../workflows/domain/policy/plausibility-bounds.json', import.meta.url), 'utf8'),
    );
    const schema = z.object({
      models: z.record(z.string(), z.object({ minProofSec: z.number().positive() })),
      unknownModelMinProofSec: z.number().positive(),
      uniformity: z.object({ minProofs: z.number().int().min(2), minRelativeSpread: z.number().positive().lt(1) }),
    });
    const t = schema.parse(raw);
    // The unknown-model bound is the loosest: no listed model may claim more than an unknown one.
    for (const { minProofSec: sec } of Object.values(t.models))
      expect(sec).toBeGreaterThanOrEqual(t.unknownModelMinProofSec);
  });

  it('leaves room above every published timing (shared/reference/cuzk.md)', () => {
    // Published seconds per proof on one GPU: 5070 Ti 37.7 s (best host), 4090 143 s, 3090 138 s;
    // 2x A40 measured 35.9 proofs/h. None may be near its model's bound.
    expect(minProofSec('RTX 5070 Ti')).toBeLessThan(37.7 / 1.5);
    expect(minProofSec('RTX 4090')).toBeLessThan(143 / 1.5);
    expect(minProofSec('RTX 3090')).toBeLessThan(138 / 1.5);
    expect(ceilingRate('A40', 2)).toBeGreaterThan(35.9 * 3);
  });

  it('refuses a malformed table instead of judging hosts with it', () => {
    expect(() =>
      checkBounds({
        models: { X: { minProofSec: 0 } },
        unknownModelMinProofSec: 8,
        uniformity: { minProofs: 4, minRelativeSpread: 0.001 },
      }),
    ).toThrow(/models\["X"\]/);
    expect(() =>
      checkBounds({ models: {}, unknownModelMinProofSec: -1, uniformity: { minProofs: 4, minRelativeSpread: 0.001 } }),
    ).toThrow(/unknownModelMinProofSec/);
    expect(() =>
      checkBounds({ models: {}, unknownModelMinProofSec: 8, uniformity: { minProofs: 1.5, minRelativeSpread: 0.001 } }),
    ).toThrow(/minProofs/);
    expect(() => checkBounds(null)).toThrow(/not an object/);
  });
});

describe('implausible claims', () => {
  const host = { gpuName: 'RTX 4090', gpus: 2 };

  it('passes the rate a healthy 2x A40 measured (35.9 proofs/h) and realistic timings', () => {
    expect(implausibleEvidence({ ...host, gpuName: 'A40', rate: 35.9, timings: realistic(200_000) })).toBeNull();
  });

  it('flags a rate above what the GPUs can do: 2x RTX 4090 at 15 s per proof cannot exceed 480 proofs/h', () => {
    expect(ceilingRate('RTX 4090', 2)).toBe(480);
    expect(implausibleEvidence({ ...host, rate: 480, timings: realistic(15_000) })).toBeNull();
    const e = implausibleEvidence({ ...host, rate: 481, timings: realistic(15_000) });
    expect(e).toMatchObject({ check: 'rate-above-ceiling', rate: 481, ceilingRate: 480, gpus: 2, minProofSec: 15 });
    expect(describeImplausible(e!)).toBe(
      'claimed 481 proofs/h, above the 480 proofs/h that 2x RTX 4090 can do (at least 15 s per proof per GPU)',
    );
  });

  it('judges an unknown model by the loosest bound, and more GPUs by a higher ceiling', () => {
    expect(ceilingRate('Some Future GPU', 1)).toBe(3600 / PLAUSIBILITY_BOUNDS.unknownModelMinProofSec);
    expect(ceilingRate('RTX 4090', 4)).toBe(2 * ceilingRate('RTX 4090', 2));
    // A rate only an unknown model's bound allows is still refused for a known, slower one.
    expect(implausibleEvidence({ ...host, gpuName: 'RTX 3060', gpus: 1, rate: 200, timings: [] })).not.toBeNull();
    expect(implausibleEvidence({ ...host, gpuName: 'Some Future GPU', gpus: 1, rate: 200, timings: [] })).toBeNull();
  });

  it('judges what the host measured on a compressed clock once the lifecycle converts it with its Clock', () => {
    // At 100x a 100 s proof takes 1 s: 3600 proofs per clock hour on one GPU is 36 real proofs/h.
    const clock = clockOf(0.01);
    const timings = realReport(batch(realistic(1000)), clock).timings;
    expect(implausibleEvidence({ ...host, gpus: 1, rate: realRate(3600, clock), timings })).toBeNull();
    // The same figures taken as real are impossible.
    expect(implausibleEvidence({ ...host, gpus: 1, rate: 3600, timings: realistic(1000) })).toMatchObject({
      check: 'rate-above-ceiling',
    });
  });

  it('flags timings too uniform to be measured, from minProofs proofs on', () => {
    const same = Array.from({ length: 4 }, (_, i) => timing(i, 100_000));
    const e = implausibleEvidence({ ...host, rate: 30, timings: same });
    expect(e).toEqual({
      check: 'uniform-timings',
      proofs: 4,
      relativeSpread: 0,
      minRelativeSpread: 0.0005,
      medianMs: 100_000,
    });
    expect(describeImplausible(e!)).toMatch(/^4 proofs took the same time to within 0 % \(median 100000 ms\)/);
    // 10 ms apart over 100 s is 0.01 %: still scripted.
    expect(
      implausibleEvidence({ ...host, rate: 30, timings: same.map((t, i) => ({ ...t, totalMs: t.totalMs + i * 3 })) }),
    ).toMatchObject({
      check: 'uniform-timings',
    });
    // Too few proofs to say; a real spread of 1 s in 100 s passes.
    expect(implausibleEvidence({ ...host, rate: 30, timings: same.slice(0, 3) })).toBeNull();
    expect(
      implausibleEvidence({ ...host, rate: 30, timings: same.map((t, i) => ({ ...t, totalMs: t.totalMs + i * 300 })) }),
    ).toBeNull();
  });

  it('checks a production window by its rate alone (no timings)', () => {
    expect(implausibleEvidence({ ...host, rate: 100, timings: [] })).toBeNull();
    expect(implausibleEvidence({ ...host, rate: 5000, timings: [] })).toMatchObject({ check: 'rate-above-ceiling' });
  });
});
