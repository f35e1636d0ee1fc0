import { describe, expect, it } from 'vitest';
import type { OfferCandidate } from '../../workflows/domain/policy/offer-ranking.js';
import type { PerfSample } from '../../workflows/domain/policy/predictions.js';
import { portfolioFleet, rankForRunByValue } from '../../workflows/domain/policy/scaler-ranking.js';
import {
  choosePortfolio,
  type PortfolioTarget,
  rankByValue,
  UCB_Z,
  type ValuedOffer,
} from '../../workflows/domain/policy/value-ranking.js';

const offer = (offerId: number, gpuName: string, numGpus: number, ramGb: number, dphTotal: number): OfferCandidate => ({
  offerId,
  machineId: 1000 + offerId,
  gpuName,
  numGpus,
  cpuRamMb: ramGb * 1024,
  dphTotal,
});
const sample = (machineId: number, gpuName: string, numGpus: number, ramGb: number, rate: number): PerfSample => ({
  machineId,
  gpuName,
  numGpus,
  cpuRamMb: ramGb * 1024,
  rate,
});
const target: PortfolioTarget = {
  targetRate: 300,
  maxDph: 6,
  maxInstances: 12,
  maxConcurrentBenchmarks: 4,
  minRate: 29,
  explorationSlots: 1,
};

describe('rankByValue', () => {
  it('ranks by the upper bound per billed dollar, not by price: a big-RAM host before a cheap small one', () => {
    const r = rankByValue(
      [offer(1, 'RTX 5070 Ti', 1, 125, 0.2), offer(2, 'RTX 5070 Ti', 1, 768, 0.33), offer(3, 'RTX 4090', 1, 251, 0.3)],
      [],
      [],
      29,
    );
    expect(r.map((o) => o.offerId)).toEqual([2, 1, 3]);
    const top = r[0]!;
    expect(top.score).toBeCloseTo(top.upperRate / top.dphTotal, 9);
    expect(top.upperRate).toBeCloseTo(top.predictedRate * Math.exp(UCB_Z * top.prediction.logSd), 9);
  });

  it('explores where the bound is high: a little-known kind outranks a known one of the same expected value', () => {
    // Both expected at about 60 proofs/h per $0.30; the 3090 on 504 GB was measured 20 times, the 4090 never.
    const samples = [
      ...Array.from({ length: 20 }, (_, i) => sample(i + 1, 'RTX 3090', 1, 504, 60)),
      ...Array.from({ length: 20 }, (_, i) => sample(100 + i, 'RTX 4090', 1, 504, 60)),
    ];
    const r = rankByValue([offer(1, 'RTX 3090', 1, 504, 0.3), offer(2, 'RTX 4090', 2, 2016, 0.6)], samples, [], 29);
    expect(r[0]!.offerId).toBe(2);
    expect(r[0]!.prediction.logSd).toBeGreaterThan(r[1]!.prediction.logSd);
  });

  it('drops bad machines, a machine measured under minRate, a kind that cannot reach it, free offers and second slices', () => {
    const slow = sample(1001, 'RTX 4090', 1, 504, 20);
    const r = rankByValue(
      [
        offer(1, 'RTX 4090', 1, 504, 0.4), // its machine measured 20
        offer(2, 'RTX 4090', 1, 504, 0.4), // marked bad
        offer(3, 'RTX 5070 Ti', 1, 504, 0), // free: no price to rank
        offer(4, 'RTX 5070 Ti', 1, 504, 0.3),
        { ...offer(5, 'RTX 5070 Ti', 1, 504, 0.3), machineId: 1004 }, // the same machine as offer 4
      ],
      [slow, ...Array.from({ length: 10 }, (_, i) => sample(50 + i, 'RTX 5070 Ti', 1, 504, 90))],
      [1002],
      29,
    );
    expect(r.map((o) => o.offerId)).toEqual([4]);
    // Twenty 3060s of 125 GB measured at 5 proofs/h: not even the bound reaches 29.
    const tiny = Array.from({ length: 20 }, (_, i) => sample(i + 1, 'RTX 3060', 1, 125, 5));
    expect(rankByValue([offer(9, 'RTX 3060', 1, 125, 0.1)], tiny, [], 29)).toEqual([]);
  });

  it('rankForRunByValue leaves out offers an open rental holds', () => {
    const r = rankForRunByValue(
      [offer(1, 'RTX 5070 Ti', 1, 504, 0.3), offer(2, 'RTX 5070 Ti', 1, 504, 0.31)],
      [{ offerId: 1 }],
      [],
      [],
      29,
    );
    expect(r.map((o) => o.offerId)).toEqual([2]);
  });
});

const valued = (id: number, predictedRate: number, dph: number, over: Partial<ValuedOffer> = {}): ValuedOffer => ({
  ...offer(id, 'RTX 5070 Ti', 1, 504, dph),
  prediction: { rate: predictedRate, logSd: 0.3, source: 'prior', samples: 0 },
  predictedRate,
  upperRate: predictedRate * Math.exp(0.3),
  score: (predictedRate * Math.exp(0.3)) / dph,
  source: 'prior',
  ...over,
});

describe('choosePortfolio', () => {
  const ranked = [
    valued(1, 100, 0.3),
    valued(2, 100, 0.3),
    valued(3, 100, 0.3),
    valued(4, 100, 0.3),
    valued(5, 100, 0.3),
  ];

  it('far from the target: several at once, each counted at its expected rate, up to the benchmark cap', () => {
    const none = { promoted: [], inFlight: [] };
    expect(choosePortfolio(ranked, none, target, 1.25).map((o) => o.offerId)).toEqual([1, 2, 3]);
    expect(choosePortfolio(ranked, none, { ...target, maxConcurrentBenchmarks: 2 }, 1.25)).toHaveLength(2);
  });

  it('near the target: one; rentals in flight count at their expected rate', () => {
    const now = { promoted: [{ rate: 150, dph: 0.5 }], inFlight: [{ dph: 0.3, predictedRate: 100 }] };
    expect(choosePortfolio(ranked, now, target, 1.25).map((o) => o.offerId)).toEqual([1]);
  });

  it('never passes the budget or the instance cap', () => {
    const now = { promoted: [{ rate: 100, dph: 5.8 }], inFlight: [] };
    expect(choosePortfolio(ranked, now, target, 1.25)).toEqual([]);
    const full = { promoted: Array.from({ length: 12 }, () => ({ rate: 10, dph: 0.1 })), inFlight: [] };
    expect(choosePortfolio(ranked, full, target, 1.25)).toEqual([]);
  });

  it('a model nobody measured takes only a slot left over, explorationSlots per run', () => {
    const unknown = (id: number) =>
      valued(id, 40, 0.1, {
        source: 'unknown',
        upperRate: 110,
        score: 1100,
        prediction: { rate: 40, logSd: 1, source: 'unknown', samples: 0 },
      });
    const list = [unknown(8), unknown(9), valued(1, 100, 0.3), valued(2, 100, 0.3)];
    // Two known ones (200) leave a deficit and two slots: one goes to the unknown model, not both.
    expect(choosePortfolio(list, { promoted: [], inFlight: [] }, target, 1.25).map((o) => o.offerId)).toEqual([
      1, 2, 8,
    ]);
    expect(
      choosePortfolio(list, { promoted: [], inFlight: [] }, { ...target, explorationSlots: 0 }, 1.25),
    ).toHaveLength(2);
  });

  it('explores within a $/h budget as well as the slots', () => {
    const unknown = (id: number, dph: number) =>
      valued(id, 40, dph, { source: 'unknown', prediction: { rate: 40, logSd: 1, source: 'unknown', samples: 0 } });
    const open = { ...target, explorationSlots: 2 };
    const list = [unknown(5, 0.4), unknown(6, 0.7)];
    const none = { promoted: [], inFlight: [] };
    expect(choosePortfolio(list, none, open, 1.25).map((o) => o.offerId)).toEqual([5, 6]);
    // $0.50/h of exploration: the $0.40 one fits, the $0.70 one would pass it.
    expect(choosePortfolio(list, none, { ...open, explorationDph: 0.5 }, 1.25).map((o) => o.offerId)).toEqual([5]);
  });

  it('at the target: one offer that could be clearly cheaper per proof than the dearest host, only with nothing in flight', () => {
    const promoted = [
      { rate: 200, dph: 0.6 }, // $0.003 per proof
      { rate: 120, dph: 0.6 }, // $0.005 per proof: the dearest
    ];
    const cheap = valued(7, 100, 0.3); // bound 135/h at $0.30: $0.0022 per proof
    const dear = valued(6, 50, 0.3); // bound 67/h: $0.0044, not 1.25x under $0.005
    expect(choosePortfolio([dear, cheap], { promoted, inFlight: [] }, target, 1.25).map((o) => o.offerId)).toEqual([7]);
    expect(choosePortfolio([dear], { promoted, inFlight: [] }, target, 1.25)).toEqual([]);
    expect(choosePortfolio([cheap], { promoted, inFlight: [{ dph: 0.3, predictedRate: 0 }] }, target, 1.25)).toEqual(
      [],
    );
  });
});

describe('portfolioFleet', () => {
  it('counts promoted hosts at their measured rate and rentals in flight at what their hardware is expected to prove', () => {
    const row = (key: string, outcome: string | null, benchRate: number | null) => ({
      rentalKey: key,
      workflowId: `wf-${key}`,
      outcome,
      benchRate,
      dphTotal: 0.3,
      machineId: 1,
      gpuName: 'RTX 5070 Ti',
      numGpus: 1,
      cpuRamMb: 768 * 1024,
    });
    const f = portfolioFleet(
      [row('a', 'promoted', 90), row('b', null, null), row('c', null, null)],
      [
        { workflowId: 'wf-b', rentalKey: 'b' },
        { workflowId: 'wf-d', rentalKey: 'd' },
      ],
      [],
    );
    expect(f.promoted).toEqual([{ key: 'a', rate: 90, dph: 0.3 }]);
    // b runs (expected from the prior); c's lifecycle is gone (the reconciler's); d has no row yet.
    expect(f.inFlight).toHaveLength(2);
    expect(f.inFlight[0]!.predictedRate).toBeCloseTo(3600 / 37.7, 6);
    expect(f.inFlight[1]).toEqual({ dph: 0, predictedRate: null });
  });

  it('counts a row whose hardware is not written yet with no prediction, and marks bid rentals interruptible', () => {
    const base = { workflowId: 'wf', dphTotal: 0.3, machineId: null, gpuName: null, numGpus: null, cpuRamMb: null };
    const f = portfolioFleet(
      [
        { ...base, rentalKey: 'early', outcome: null, benchRate: null },
        { ...base, rentalKey: 'spot', outcome: 'promoted', benchRate: 50, bidDph: 0.2 },
      ],
      [{ workflowId: 'wf', rentalKey: 'early' }],
      [sample(1, 'RTX 5070 Ti', 1, 768, 90)],
    );
    expect(f.inFlight).toEqual([{ dph: 0.3, predictedRate: null }]);
    expect(f.promoted).toEqual([{ key: 'spot', rate: 50, dph: 0.3, interruptible: true }]);
  });
});
