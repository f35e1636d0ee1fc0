import { describe, expect, it } from 'vitest';
import { type SpendRow, spendReport } from '../../workflows/domain/policy/spend-report.js';

const NOW = Date.parse('2026-12-05T12:00:00Z');
const H = 3_600_000;
const at = (ms: number) => new Date(ms).toISOString();

function row(over: Partial<SpendRow>): SpendRow {
  return {
    gpuName: 'RTX 4090',
    outcome: null,
    failureType: null,
    createdAt: at(NOW - 2 * H),
    dph: 0.5,
    rentedAt: at(NOW - 2 * H),
    verdictAt: null,
    destroyedAt: null,
    costUsd: null,
    beforeVerdictUsd: null,
    productionUsd: null,
    productionSec: null,
    benchRate: null,
    ...over,
  };
}

// A known fleet: one host proving for 2 h after a 1 h verdict, one benchmarking, two killed, one dead before renting.
const fleet: SpendRow[] = [
  row({ outcome: 'promoted', rentedAt: at(NOW - 3 * H), verdictAt: at(NOW - 2 * H), benchRate: 40, dph: 0.6 }),
  row({ rentedAt: at(NOW - 0.5 * H), dph: 0.2, gpuName: 'A40' }),
  row({
    outcome: 'killed',
    failureType: 'BenchRateBelowMin',
    destroyedAt: at(NOW - H),
    costUsd: 0.25,
    beforeVerdictUsd: 0.25,
    productionUsd: 0,
    productionSec: 0,
    gpuName: 'A40',
    createdAt: '2026-12-04T20:00:00.000Z',
  }),
  row({
    outcome: 'killed',
    failureType: 'RateDegraded',
    destroyedAt: at(NOW - H),
    verdictAt: at(NOW - 5 * H),
    costUsd: 2.5,
    beforeVerdictUsd: 0.5,
    productionUsd: 2,
    productionSec: 4 * 3600,
    benchRate: 30,
  }),
  row({ outcome: 'killed', failureType: 'OfferUnavailable', dph: null, rentedAt: null, gpuName: null }),
];

describe('fleet spend report on a known fleet', () => {
  it('totals: spend now, delivering, spent, waste, delivered proofs and $ per proof', () => {
    const r = spendReport(fleet, NOW, at(NOW - 24 * H), null);
    expect(r.total).toEqual({
      rentals: 5,
      // Each rental once, by its last outcome: the RateDegraded rental was promoted, then killed.
      promoted: 1,
      killed: 3,
      // 0.6 x 3 h + 0.2 x 0.5 h + 0.25 + 2.5
      spentUsd: 4.65,
      beforeVerdictUsd: 0.6 + 0.1 + 0.25 + 0.5,
      productionUsd: 1.2 + 2,
      wasteUsd: 0.25,
      spendNowDph: 0.8,
      deliveringProofsPerHour: 40,
      // 40/h x 2 h + 30/h x 4 h
      proofsDelivered: 200,
      dollarsPerDeliveredProof: 0.02325,
    });
    expect(r.groups).toEqual([]);
  });

  it('by GPU, failure type and day', () => {
    const gpu = spendReport(fleet, NOW, at(NOW - 24 * H), 'gpu');
    expect(gpu.groups.map((g) => [g.key, g.rentals, g.spentUsd])).toEqual([
      ['RTX 4090', 2, 4.3],
      ['A40', 2, 0.35],
      ['(not rented)', 1, 0],
    ]);
    const failure = spendReport(fleet, NOW, at(NOW - 24 * H), 'failure');
    expect(Object.fromEntries(failure.groups.map((g) => [g.key, g.spentUsd]))).toEqual({
      RateDegraded: 2.5,
      '(promoted, running)': 1.8,
      BenchRateBelowMin: 0.25,
      '(no verdict yet)': 0.1,
      OfferUnavailable: 0,
    });
    const day = spendReport(fleet, NOW, at(NOW - 24 * H), 'day');
    expect(day.groups.map((g) => [g.key, g.rentals])).toEqual([
      ['2026-12-04', 1],
      ['2026-12-05', 4],
    ]);
  });

  it('counts a rental that ended without its lifecycle counting it at its price over the rented span', () => {
    // Terminated without a verdict, its instance destroyed by the reconciler an hour after the rent.
    const terminated = row({ rentedAt: at(NOW - 3 * H), destroyedAt: at(NOW - 2 * H), dph: 0.8 });
    const r = spendReport([terminated], NOW, at(NOW - 4 * H), null);
    expect(r.total.spentUsd).toBeCloseTo(0.8, 9);
    expect(r.total.spendNowDph).toBe(0);
  });

  it('counts a promoted rental whose price moved: the recorded cost up to the move, the new price after', () => {
    // Promoted 2 h ago after 1 h at $0.6/h; the price rose to $0.9/h an hour ago, when $1.20 was counted.
    const moved = row({
      outcome: 'promoted',
      rentedAt: at(NOW - 3 * H),
      verdictAt: at(NOW - 2 * H),
      dph: 0.9,
      beforeVerdictUsd: 0.6,
      productionUsd: 0.6,
      costCountedAt: at(NOW - H),
      benchRate: 40,
    });
    const r = spendReport([moved], NOW, at(NOW - 4 * H), null);
    expect(r.total.beforeVerdictUsd).toBeCloseTo(0.6, 9);
    expect(r.total.productionUsd).toBeCloseTo(0.6 + 0.9, 9);
    expect(r.total.spendNowDph).toBeCloseTo(0.9, 9);
    // Production time still counts from the verdict: 2 h at 40 proofs/h.
    expect(r.total.proofsDelivered).toBeCloseTo(80, 6);
  });
});
