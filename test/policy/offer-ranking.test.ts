import { describe, expect, it } from 'vitest';
import { chooseOffers, type OfferCandidate, rankOffers } from '../../workflows/domain/policy/offer-ranking.js';

const offer = (offerId: number, machineId: number, gpuName: string, dphTotal: number, numGpus = 1): OfferCandidate => ({
  offerId,
  machineId,
  gpuName,
  numGpus,
  cpuRamMb: 256_000,
  dphTotal,
});

const perf = { byMachine: { '10': 40, '11': 12 }, perGpuByModel: { 'RTX 4090': 20 } };
const target = {
  targetRate: 100,
  maxDph: 2,
  maxInstances: 5,
  maxConcurrentBenchmarks: 3,
  explorationSlots: 1,
  minRate: 29,
};

describe('rankOffers', () => {
  it('prefers the machine’s own history, then its GPU model’s, and drops predicted-too-slow ones', () => {
    const r = rankOffers(
      [
        offer(1, 10, 'A40', 1.0),
        offer(2, 11, 'A40', 0.1),
        offer(3, 12, 'RTX 4090', 0.5, 2),
        offer(4, 13, 'RTX 4090', 0.5, 1),
      ],
      perf,
      [],
      29,
    );
    expect(r.known.map((o) => [o.offerId, o.source, o.predictedRate])).toEqual([
      [3, 'gpu-model', 40],
      [1, 'machine', 40],
    ]);
    expect(r.explore).toEqual([]);
  });

  it('never ranks a bad machine, and keeps unknown models apart for exploration, cheapest first', () => {
    const r = rankOffers([offer(1, 10, 'A40', 1), offer(5, 20, 'H100', 2), offer(6, 21, 'L40', 0.8)], perf, [10], 29);
    expect(r.known).toEqual([]);
    expect(r.explore.map((o) => o.offerId)).toEqual([6, 5]);
  });

  it('takes one offer per machine', () => {
    const r = rankOffers([offer(1, 10, 'A40', 1), offer(2, 10, 'A40', 0.9)], perf, [], 29);
    expect(r.known).toHaveLength(1);
  });
});

describe('chooseOffers', () => {
  const ranked = rankOffers(
    [
      offer(1, 10, 'A40', 0.9),
      offer(3, 12, 'RTX 4090', 0.5, 2),
      offer(7, 30, 'RTX 4090', 0.6, 2),
      offer(5, 20, 'H100', 0.4),
    ],
    perf,
    [],
    29,
  );

  it('takes the best per dollar until the benchmark cap', () => {
    const chosen = chooseOffers(ranked, { promoted: [], inFlight: [] }, target);
    expect(chosen.map((o) => o.offerId)).toEqual([3, 7, 1]);
    expect(chosen.reduce((s, o) => s + o.dphTotal, 0)).toBeLessThanOrEqual(target.maxDph);
  });

  it('skips what the budget cannot pay and explores at most explorationSlots unknown models', () => {
    const chosen = chooseOffers(
      ranked,
      { promoted: [], inFlight: [] },
      { ...target, maxDph: 1.6, maxConcurrentBenchmarks: 5 },
    );
    expect(chosen.map((o) => o.offerId)).toEqual([3, 7, 5]);
    const none = chooseOffers(ranked, { promoted: [], inFlight: [] }, { ...target, maxDph: 1.6, explorationSlots: 0 });
    expect(none.map((o) => o.offerId)).toEqual([3, 7]);
  });

  it('explores within a $/h budget as well as the slots', () => {
    const explore = rankOffers([offer(5, 20, 'H100', 0.4), offer(6, 21, 'B200', 0.7)], perf, [], 29);
    const open = { ...target, maxConcurrentBenchmarks: 5, explorationSlots: 2 };
    const both = chooseOffers(explore, { promoted: [], inFlight: [] }, open);
    expect(both.map((o) => o.offerId)).toEqual([5, 6]);
    // $0.50/h of exploration: the $0.40 one fits, the $0.70 one would pass the budget.
    const bounded = chooseOffers(explore, { promoted: [], inFlight: [] }, { ...open, explorationDph: 0.5 });
    expect(bounded.map((o) => o.offerId)).toEqual([5]);
  });

  it('rents nothing once the fleet already meets its target', () => {
    expect(chooseOffers(ranked, { promoted: [{ rate: 120, dph: 1 }], inFlight: [] }, target)).toEqual([]);
  });

  it('counts lifecycles in flight against the caps', () => {
    const busy = {
      promoted: [],
      inFlight: [
        { dph: 0.1, predictedRate: null },
        { dph: 0.1, predictedRate: null },
        { dph: 0.1, predictedRate: null },
      ],
    };
    expect(chooseOffers(ranked, busy, target)).toEqual([]);
  });
});
