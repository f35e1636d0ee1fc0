import { describe, expect, it } from 'vitest';
import type { OfferCandidate } from '../../workflows/domain/policy/offer-ranking.js';
import type { PerfSample } from '../../workflows/domain/policy/predictions.js';
import { offerPreview, rankForRunByValue } from '../../workflows/domain/policy/scaler-ranking.js';

/**
 * `gpu-fleet offers` previews the scaler: its ranking is rankForRunByValue's on the same inputs, and every
 * offer the search found is either ranked or named with the reason the scaler passes it over.
 */

const RAM = 768 * 1024;
const offer = (offerId: number, machineId: number, gpuName: string, dphTotal: number, numGpus = 1): OfferCandidate => ({
  offerId,
  machineId,
  gpuName,
  numGpus,
  cpuRamMb: RAM,
  dphTotal,
});
const sample = (machineId: number, gpuName: string, rate: number): PerfSample => ({
  machineId,
  gpuName,
  numGpus: 1,
  cpuRamMb: RAM,
  rate,
});

const MIN_RATE = 29;
const samples = [sample(10, 'RTX 5070 Ti', 90), sample(11, 'RTX 5070 Ti', 12)];
const offers = [
  offer(1, 10, 'RTX 5070 Ti', 0.2), // its own benchmark: 90 proofs/h
  offer(2, 11, 'RTX 5070 Ti', 0.05), // its own benchmark under minRate: out, however cheap
  offer(3, 12, 'RTX 5070 Ti', 0.1), // its class's benchmarks
  offer(4, 13, 'RTX 5070 Ti', 0.1), // marked bad
  offer(5, 14, 'RTX 5070 Ti', 0.1), // resting
  offer(6, 15, 'RTX 5070 Ti', 0.1), // an open rental holds it
  offer(7, 12, 'RTX 5070 Ti', 0.3), // a second offer of machine 12
  offer(8, 16, 'RTX 5070 Ti', 0), // free: not a real offer
];
const rented = [{ offerId: 6 }];
const out = { bad: [13], resting: [14] };

describe('offerPreview', () => {
  it("ranks exactly as the scaler's rankForRunByValue does, with each offer's prediction, bound, score and source", () => {
    const { ranked } = offerPreview(offers, rented, samples, out, MIN_RATE);
    const scaler = rankForRunByValue(offers, rented, samples, [...out.bad, ...out.resting], MIN_RATE);
    expect(ranked).toEqual(scaler);
    expect(ranked.map((o) => [o.offerId, o.source])).toEqual([
      [1, 'machine'],
      [3, 'class'],
    ]);
    for (const o of ranked) {
      expect(o.upperRate).toBeGreaterThanOrEqual(o.predictedRate);
      expect(o.score).toBeCloseTo(o.upperRate / o.dphTotal, 9);
    }
  });

  it('names every offer it leaves out with the reason the scaler passes it over', () => {
    const { ranked, leftOut } = offerPreview(offers, rented, samples, out, MIN_RATE);
    expect(leftOut.map((o) => [o.offerId, o.reason])).toEqual([
      [2, 'under min rate'],
      [4, 'bad'],
      [5, 'resting'],
      [6, 'rented'],
      [7, 'same machine'],
      [8, 'free'],
    ]);
    expect([...ranked, ...leftOut].map((o) => o.offerId).sort()).toEqual(offers.map((o) => o.offerId).sort());
    expect(leftOut[0]).toMatchObject({ source: 'machine', predictedRate: 12 });
  });

  it('leaves out a kind nobody measured only when even its upper bound is under minRate, and says so with the bound', () => {
    const unknown = [offer(20, 30, 'NO-SUCH-GPU', 0.1)];
    const { ranked } = offerPreview(unknown, [], [], { bad: [], resting: [] }, 1);
    expect(ranked.map((o) => o.source)).toEqual(['unknown']);
    const bound = ranked[0]!.upperRate;
    const { ranked: none, leftOut } = offerPreview(unknown, [], [], { bad: [], resting: [] }, bound * 1.01);
    expect(none).toEqual([]);
    expect(leftOut).toEqual([
      expect.objectContaining({ offerId: 20, reason: 'under min rate', source: 'unknown', upperRate: bound }),
    ]);
  });
});
