import { describe, expect, it } from 'vitest';
import { type OfferCandidate, rankOffers } from '../../workflows/domain/policy/offer-ranking.js';

const offer = (offerId: number, machineId: number, gpuName: string, dphTotal: number, numGpus = 1): OfferCandidate => ({
  offerId,
  machineId,
  gpuName,
  numGpus,
  cpuRamMb: 256_000,
  dphTotal,
});

const perf = { byMachine: { '10': 40, '11': 12 }, perGpuByModel: { 'RTX 4090': 20 } };

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
