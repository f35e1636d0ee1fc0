import { describe, expect, it } from 'vitest';
import type { MarketOffer } from '../../infra/bench/market.js';
import { oracle } from '../../infra/bench/oracle.js';
import { SimOfferSchema } from '../../infra/sim/scenario.js';

function offer(id: number, trueRate: number, billedDph: number, more: Partial<MarketOffer> = {}): MarketOffer {
  return {
    offer: SimOfferSchema.parse({
      id,
      machine_id: id,
      host_id: id,
      gpu_name: 'RTX 4090',
      num_gpus: 1,
      gpu_ram: 24564,
      cpu_ram: 516_096,
      dph_total: billedDph,
    }),
    trueRate,
    searchedDph: billedDph,
    billedDph,
    listedAtH: 0,
    takenAtH: 1000,
    faults: [],
    fatal: false,
    priceRiseAtH: null,
    degradeAfterH: null,
    preemptAfterH: null,
    ...more,
  };
}

const base = { targetRate: 100, maxDph: 10, maxInstances: 10, minRate: 29, bootH: 0.5, horizonH: 10, stepH: 0.25 };

describe('oracle', () => {
  it('rents the best proofs per billed dollar up to the target and pays boot plus production only', () => {
    const m = [offer(1, 100, 1), offer(2, 100, 0.5), offer(3, 200, 0.8)];
    const r = oracle(m, base);
    // Offer 3 (250 proofs per $) alone reaches the target.
    expect(r.rented).toEqual([3]);
    expect(r.bootDollars).toBeCloseTo(0.5 * 0.8, 9);
    expect(r.productionDollars).toBeCloseTo(9.5 * 0.8, 9);
    expect(r.proofs).toBeCloseTo(9.5 * 200, 9);
    expect(r.dollarsPerProof).toBeCloseTo(8 / 1900, 9);
    expect(r.timeToTargetH).toBeCloseTo(0.5, 9);
  });

  it('never rents fatal, too-slow, not yet listed or already taken offers, nor past the budget', () => {
    const m = [
      offer(1, 500, 0.1, { fatal: true }),
      offer(2, 20, 0.01),
      offer(3, 500, 0.1, { listedAtH: 20 }),
      offer(4, 500, 0.1, { takenAtH: 0 }),
      offer(5, 60, 4),
      offer(6, 60, 7),
    ];
    const r = oracle(m, base);
    expect(r.rented).toEqual([5]);
    expect(r.timeToTargetH).toBeNull();
  });

  it('gives back a preempted or degraded host and rents the next best', () => {
    const m = [offer(1, 100, 0.5, { preemptAfterH: 3 }), offer(2, 100, 1, { degradeAfterH: 100 }), offer(3, 90, 1)];
    const r = oracle(m, base);
    expect(r.rented).toEqual([1, 2]);
    const d = oracle([offer(1, 60, 0.5, { degradeAfterH: 2 }), offer(2, 50, 1)], { ...base, targetRate: 50 });
    // Offer 1 proves 2 h at 60/h, then at 20/h (under 29): given back and replaced by offer 2.
    expect(d.rented).toEqual([1, 2]);
    expect(d.proofs).toBeCloseTo(2 * 60 + (10 - 2.5 - 0.5) * 50, 6);
  });

  it('bills a price rise from when it happens', () => {
    const r = oracle([offer(1, 100, 1, { priceRiseAtH: 5 })], base);
    expect(r.dollars).toBeCloseTo(5 * 1 + 5 * 1.3, 9);
  });
});
