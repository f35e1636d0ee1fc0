import { describe, expect, it } from 'vitest';
import type { DayRun, Rental } from '../../infra/bench/market-day.js';
import type { MarketOffer } from '../../infra/bench/market.js';
import { distance, marketEnding, oracleScore, scoreRun } from '../../infra/bench/market-score.js';
import { SimOfferSchema } from '../../infra/sim/scenario.js';

const H = 3600_000;

function offer(id: number, gpu: string, trueRate: number, billedDph: number, more: Partial<MarketOffer> = {}) {
  return {
    offer: SimOfferSchema.parse({
      id,
      machine_id: id,
      host_id: id,
      gpu_name: gpu,
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
  } satisfies MarketOffer;
}

function rental(offerId: number, runH: number, endH: number, more: Partial<Rental> = {}): Rental {
  return {
    offerId,
    instanceId: offerId + 1,
    runningAt: runH * H,
    endAt: endH * H,
    priceRaisedAt: null,
    outcome: null,
    failureType: null,
    promotedAt: null,
    ...more,
  };
}

const opts = { timeScale: 1, hours: 10, targetRate: 100, minRate: 29, bootH: 0.5 };
const day = (rentals: Rental[]): DayRun => ({
  policy: 'ours',
  t0: 0,
  end: 10 * H,
  rentals,
  leftRunning: 0,
  rentedTwice: 0,
});

describe('market scoring', () => {
  const market = [
    offer(1, 'A', 120, 1),
    offer(2, 'B', 10, 0.5),
    offer(3, 'B', 80, 0.5),
    offer(4, 'A', 20, 0.2, { priceRiseAtH: 1 }),
  ];

  it('splits billed dollars by kind and counts proofs over production only', () => {
    const s = scoreRun(
      day([
        rental(1, 0, 10, { outcome: 'promoted', promotedAt: 1 * H }),
        rental(2, 0, 1, { outcome: 'killed', failureType: 'BenchRateBelowMin' }),
        rental(3, 1, 2, { outcome: 'killed', failureType: 'BenchRateBelowMin' }),
        rental(4, 2, 10, { priceRaisedAt: 4 * H }),
      ]),
      market,
      opts,
    );
    expect(s.spend.beforeProduction).toBeCloseTo(1, 9);
    expect(s.spend.production).toBeCloseTo(9, 9);
    // Offer 2 was the first B rented: exploration; offer 3, the second B, a killed host.
    expect(s.spend.exploration).toBeCloseTo(0.5, 9);
    expect(s.spend.killed).toBeCloseTo(0.5, 9);
    // No verdict at the end: 2 h at 0.2, then 6 h at 0.26 after the price rise.
    expect(s.spend.idle).toBeCloseTo(2 * 0.2 + 6 * 0.26, 9);
    expect(s.proofs).toBeCloseTo(9 * 120, 6);
    expect(s.dollarsPerProof).toBeCloseTo(s.dollars / s.proofs, 12);
    expect(s.gpuDollarsOnKilled).toBeCloseTo(1, 9);
    expect(s.timeToTargetH).toBeCloseTo(1, 6);
    // Offer 3 was healthy (80 proofs/h) and killed; offer 2 was too slow and rightly killed.
    expect(s.healthyKilled).toBe(1);
    expect(s.slowPromoted).toBe(0);
    expect(s.outcomes).toEqual({ promoted: 1, BenchRateBelowMin: 2, 'no verdict at day end': 1 });
  });

  it('counts a too-slow host promoted, a taken offer never as a healthy kill, and degradation in proofs', () => {
    const m = [offer(1, 'A', 20, 1), offer(2, 'A', 90, 1, { degradeAfterH: 1.5 }), offer(3, 'A', 90, 1)];
    const s = scoreRun(
      day([
        rental(1, 0, 10, { outcome: 'promoted', promotedAt: 1 * H }),
        rental(2, 0, 4, { outcome: 'promoted', promotedAt: 1 * H }),
        rental(3, 0, 0.1, { outcome: 'killed', failureType: 'OfferUnavailable' }),
      ]),
      m,
      opts,
    );
    expect(s.slowPromoted).toBe(1);
    expect(s.healthyKilled).toBe(0);
    // Offer 2 proves at 90/h from 1 h to 2 h (boot 0.5 h + 1.5 h), then at 30/h until 4 h.
    expect(s.proofs).toBeCloseTo(9 * 20 + 1 * 90 + 2 * 30, 6);
    expect(s.timeToTargetH).toBeCloseTo(1, 6);
  });

  it("never counts an ending the verdict table lays to the market as a healthy kill, whatever the host's rate", () => {
    const m = [offer(1, 'A', 90, 1), offer(2, 'A', 90, 1), offer(3, 'A', 90, 1), offer(4, 'A', 90, 1)];
    const ended = (failureType: string) => ({ outcome: 'killed' as const, failureType, promotedAt: 1 * H });
    const s = scoreRun(
      day([
        rental(1, 0, 3, ended('PriceAboveBudget')),
        rental(2, 0, 3, ended('PricedOut')),
        rental(3, 0, 3, ended('Preempted')),
        rental(4, 0, 3, ended('RateDegraded')),
      ]),
      m,
      opts,
    );
    // Only the RateDegraded kill of a host proving 90/h is a verdict on its health, and a wrong one.
    expect(s.healthyKilled).toBe(1);
    expect([marketEnding('PriceAboveBudget'), marketEnding('OfferUnavailable'), marketEnding('HostLost')]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('breaks the distance to the oracle into parts that add up to it', () => {
    const s = scoreRun(
      day([
        rental(1, 0, 10, { outcome: 'promoted', promotedAt: 1 * H }),
        rental(2, 0, 1, { outcome: 'killed', failureType: 'BenchRateBelowMin' }),
        rental(3, 1, 2, { outcome: 'killed', failureType: 'BenchRateBelowMin' }),
      ]),
      market,
      opts,
    );
    const o = oracleScore({
      dollars: 10,
      bootDollars: 0.5,
      productionDollars: 9.5,
      proofs: 9.5 * 120,
      dollarsPerProof: 10 / (9.5 * 120),
      timeToTargetH: 0.5,
      rented: [1],
    });
    const d = distance(s, o)!;
    expect(d.exploration + d.benchmarks + d.killedHosts + d.idle + d.price).toBeCloseTo(d.total, 12);
    expect(d.total).toBeGreaterThan(0);
    expect(distance({ ...s, proofs: 0, dollarsPerProof: null }, o)).toBeNull();
  });
});
