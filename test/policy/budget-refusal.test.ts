import { describe, expect, it } from 'vitest';
import { refusedByBudget } from '../../workflows/domain/policy/budget-refusal.js';
import { REBALANCE_FACTOR } from '../../workflows/domain/policy/keep-by-dollar.js';
import type { FleetTarget } from '../../workflows/domain/policy/offer-ranking.js';
import { choosePortfolio, type ValuedOffer } from '../../workflows/domain/policy/value-ranking.js';

// Offers as the scaler ranks them (value-ranking.ts): each machine's own benchmark, 40 proofs/h.
const offer = (offerId: number, dphTotal: number, predictedRate = 40): ValuedOffer => ({
  offerId,
  machineId: offerId,
  gpuName: 'RTX 4090',
  numGpus: 2,
  cpuRamMb: 256_000,
  dphTotal,
  prediction: { rate: predictedRate, logSd: 0.05, source: 'machine', samples: 1 },
  predictedRate,
  upperRate: predictedRate * Math.exp(0.05),
  score: (predictedRate * Math.exp(0.05)) / dphTotal,
  source: 'machine',
});
const target: FleetTarget = {
  targetRate: 200,
  maxDph: 2,
  maxInstances: 10,
  maxConcurrentBenchmarks: 5,
  explorationSlots: 1,
  minRate: 20,
};
const empty = { promoted: [], inFlight: [] };

function refused(candidates: ValuedOffer[], now: typeof empty | Parameters<typeof refusedByBudget>[2], t = target) {
  const chosen = choosePortfolio(candidates, now, t, REBALANCE_FACTOR);
  return refusedByBudget(candidates, chosen, now, t);
}

describe('refusedByBudget', () => {
  it('is true when the fleet is short of target and the next offer would break the budget', () => {
    // Two fit in $2/h; the third would make $2.70/h while the fleet is at 80 of 200 proofs/h.
    expect(refused([offer(1, 0.9), offer(2, 0.9), offer(3, 0.9)], empty)).toBe(true);
  });

  it('is false when the budget was not what stopped it', () => {
    // Target reached.
    expect(refused([offer(1, 0.9), offer(2, 0.9)], { promoted: [{ rate: 200, dph: 1 }], inFlight: [] })).toBe(false);
    // Everything affordable was taken and nothing else is on offer.
    expect(refused([offer(1, 0.9)], empty)).toBe(false);
    // The instance cap, not the budget, is the limit.
    expect(refused([offer(1, 0.5), offer(2, 0.5), offer(3, 5)], empty, { ...target, maxInstances: 2 })).toBe(false);
    // So is the cap on concurrent benchmarks.
    expect(
      refused(
        [offer(1, 0.5), offer(2, 5)],
        { promoted: [], inFlight: [{ dph: 0.4, predictedRate: null }] },
        {
          ...target,
          maxConcurrentBenchmarks: 2,
        },
      ),
    ).toBe(false);
  });

  it('counts what is already rented against the budget', () => {
    expect(refused([offer(1, 0.9)], { promoted: [{ rate: 40, dph: 1.5 }], inFlight: [] })).toBe(true);
  });
});
