import { describe, expect, it } from 'vitest';
import {
  HOST_LOG_SD,
  MACHINE_LOG_SD,
  type PerfSample,
  predictRate,
  rateAt,
} from '../../workflows/domain/policy/predictions.js';
import {
  MODEL_PRIORS,
  priorLogRate,
  RAM_SLOWDOWN,
  ramClassOf,
  UNKNOWN_MODEL_PRIOR,
} from '../../workflows/domain/policy/rate-prior.js';

const GB = (gb: number) => gb * 1024;
const hw = (machineId: number, gpuName: string, numGpus: number, ramGb: number) => ({
  machineId,
  gpuName,
  numGpus,
  cpuRamMb: GB(ramGb),
});
const sample = (machineId: number, gpuName: string, numGpus: number, ramGb: number, rate: number): PerfSample => ({
  ...hw(machineId, gpuName, numGpus, ramGb),
  rate,
});

describe('rate priors (the cuzk reference)', () => {
  it('classes RAM as Vast lists it: 504 GB is the 512 class, 251 GB the 256, 125 GB the 128', () => {
    expect(ramClassOf(504)).toBe('512');
    expect(ramClassOf(2016)).toBe('512');
    expect(ramClassOf(251)).toBe('256');
    expect(ramClassOf(125)).toBe('128');
  });

  it('slows a proof by the reference figures: x1.4 at 256 GiB, x4 at 128 GiB', () => {
    expect(RAM_SLOWDOWN['256']).toBeCloseTo(1.406, 3);
    expect(RAM_SLOWDOWN['128']).toBeCloseTo(4.03, 2);
    const big = Math.exp(priorLogRate('RTX 5070 Ti', 1, GB(768)));
    expect(big).toBeCloseTo(3600 / 37.7, 6);
    expect(Math.exp(priorLogRate('RTX 5070 Ti', 1, GB(251)))).toBeCloseTo(3600 / 53, 6);
    expect(Math.exp(priorLogRate('RTX 5070 Ti', 1, GB(125)))).toBeCloseTo(3600 / 152, 6);
  });

  it("gives each GPU an equal share of the host's RAM: 2 GPUs on 251 GB prove as two on 125 GB", () => {
    expect(Math.exp(priorLogRate('RTX 5070 Ti', 2, GB(251)))).toBeCloseTo((2 * 3600) / 152, 6);
    expect(Math.exp(priorLogRate('RTX 5070 Ti', 2, GB(2016)))).toBeCloseTo((2 * 3600) / 37.7, 6);
  });

  it('names a source for every figure, and a model without one gets the wide generic prior', () => {
    for (const p of Object.values(MODEL_PRIORS)) expect(p.source.length).toBeGreaterThan(20);
    expect(UNKNOWN_MODEL_PRIOR.logSd).toBeGreaterThan(Math.max(...Object.values(MODEL_PRIORS).map((p) => p.logSd)));
    expect(Math.exp(priorLogRate('RTX 3060', 1, GB(504)))).toBeCloseTo(40, 6);
  });
});

describe('predictRate', () => {
  it("takes the machine's own last benchmark first, with a benchmark's small spread", () => {
    const p = predictRate(hw(7, 'RTX 4090', 1, 504), [
      sample(7, 'RTX 4090', 1, 504, 61),
      sample(8, 'RTX 4090', 1, 504, 20),
    ]);
    expect(p).toEqual({ rate: 61, logSd: MACHINE_LOG_SD, source: 'machine', samples: 1 });
  });

  it('with nothing measured: the prior, its sd the model figure and the scaling combined', () => {
    const p = predictRate(hw(1, 'RTX 5070 Ti', 1, 768), []);
    expect(p.source).toBe('prior');
    expect(p.rate).toBeCloseTo(3600 / 37.7, 6);
    expect(p.logSd).toBeCloseTo(Math.sqrt(0.3 ** 2 + 0.3 ** 2), 9);
    expect(predictRate(hw(1, 'RTX 3060', 1, 768), []).source).toBe('unknown');
  });

  it('knows less the less it has seen: one benchmark of the class narrows it, twenty narrow it more', () => {
    const o = hw(100, 'RTX 4090', 1, 504);
    const one = predictRate(o, [sample(1, 'RTX 4090', 1, 504, 60)]);
    const twenty = predictRate(
      o,
      Array.from({ length: 20 }, (_, i) => sample(i + 1, 'RTX 4090', 1, 504, 60)),
    );
    const none = predictRate(o, []);
    expect(one.source).toBe('class');
    expect(one.samples).toBe(1);
    expect(twenty.samples).toBe(20);
    expect(none.logSd).toBeGreaterThan(one.logSd);
    expect(one.logSd).toBeGreaterThan(twenty.logSd);
    expect(twenty.logSd).toBeLessThan(HOST_LOG_SD / 4);
    // The prior (25 proofs/h) gives way to what was measured (60): one benchmark moves it most of the way.
    expect(one.rate).toBeGreaterThan(50);
    expect(twenty.rate).toBeCloseTo(60, 0);
  });

  it("learns a model's offset from its other classes, less surely than from its own", () => {
    // RTX 4090 hosts of 504 GB prove twice the prior: a 2x 4090 of 2 TB, never seen, is expected faster too.
    const seen = [sample(1, 'RTX 4090', 1, 504, 50), sample(2, 'RTX 4090', 1, 504, 50)];
    const o = hw(9, 'RTX 4090', 2, 2016);
    const p = predictRate(o, seen);
    const prior = predictRate(o, []);
    expect(p.source).toBe('model');
    expect(p.rate).toBeGreaterThan(prior.rate * 1.4);
    expect(p.logSd).toBeLessThan(prior.logSd);
    // Other models teach it nothing.
    expect(predictRate(o, [sample(1, 'A40', 1, 504, 500)])).toEqual(prior);
  });

  it('is deterministic and ignores the order of the samples', () => {
    const s = [sample(1, 'A40', 2, 2016, 36), sample(2, 'A40', 1, 504, 20), sample(3, 'A40', 2, 2016, 30)];
    const o = hw(9, 'A40', 2, 2016);
    expect(predictRate(o, s)).toEqual(predictRate(o, [...s].reverse()));
  });

  it('rateAt: the bound z sds of what is not known away', () => {
    const p = predictRate(hw(1, 'RTX 5070 Ti', 1, 768), []);
    expect(rateAt(p, 1)).toBeCloseTo(p.rate * Math.exp(p.logSd), 9);
    expect(rateAt(p, -1)).toBeLessThan(p.rate);
  });
});
