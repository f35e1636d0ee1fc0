import { describe, expect, it } from 'vitest';
import {
  costPerProof,
  KEEP_COST_FACTOR,
  keepByDollar,
  REBALANCE_FACTOR,
  retirements,
  targetCostPerProof,
} from '../../workflows/domain/policy/keep-by-dollar.js';

describe('keepByDollar', () => {
  // The pair: a 2x A40 at $1.17/h proving 33/h, a 5070 Ti at $0.30/h proving 87/h.
  const a40 = { rate: 33, dph: 1.17 };
  const ti = { rate: 87, dph: 0.3 };

  it('keeps every host over minRate while the fleet cannot reach its target without it', () => {
    expect(keepByDollar(a40, [], 100)).toEqual({ keep: true });
    expect(keepByDollar(a40, [ti], 300)).toEqual({ keep: true });
  });

  it('prices out a host over the factor of what the target costs per proof, keeps one within it', () => {
    const fleet = [ti, ti, ti, ti]; // 348 proofs/h at $0.00345 per proof
    expect(keepByDollar(ti, fleet, 300)).toEqual({ keep: true });
    const d = keepByDollar(a40, fleet, 300);
    expect(d.keep).toBe(false);
    if (d.keep) return;
    expect(d.costPerProof).toBeCloseTo(1.17 / 33, 9);
    expect(d.bestCostPerProof).toBeCloseTo(0.3 / 87, 9);
    expect(d.factor).toBe(KEEP_COST_FACTOR);
    // At exactly the factor: kept; a hair over: not.
    const bar = costPerProof(ti);
    expect(keepByDollar({ rate: 100, dph: 100 * bar * KEEP_COST_FACTOR }, fleet, 300).keep).toBe(true);
    expect(keepByDollar({ rate: 100, dph: 100 * bar * KEEP_COST_FACTOR * 1.001 }, fleet, 300).keep).toBe(false);
  });

  it('one exceptional host does not set the bar: the target costs what its marginal host costs', () => {
    const star = { rate: 150, dph: 0.3 }; // $0.002 per proof
    const typical = { rate: 90, dph: 0.36 }; // $0.004: twice the star, but the target needs such hosts
    expect(targetCostPerProof([star, typical], 300)).toBeNull();
    expect(keepByDollar(typical, [star, typical], 300)).toEqual({ keep: true });
    expect(targetCostPerProof([star, typical, typical], 320)).toBeCloseTo(0.004, 9);
  });
});

describe('retirements (rebalancing)', () => {
  const host = (key: string, rate: number, dph: number) => ({ key, rate, dph });

  it('retires the dearest per proof when a clearly cheaper host made the fleet exceed the target without it', () => {
    const fleet = [host('cheap', 200, 0.5), host('ok', 120, 0.4), host('dear', 60, 0.6)];
    expect(retirements(fleet, 300).map((h) => h.key)).toEqual(['dear']);
  });

  it('never takes the fleet under the target: a needed dear host stays', () => {
    const fleet = [host('cheap', 200, 0.5), host('dear', 120, 1.2)];
    expect(retirements(fleet, 300)).toEqual([]);
  });

  it('passes over a dear host the target needs and retires a smaller dear one behind it', () => {
    const fleet = [host('cheap', 250, 0.5), host('dear-big', 100, 1.0), host('dear-small', 30, 0.25)];
    // Without dear-big the fleet is 280 < 300; without dear-small it is 350.
    expect(retirements(fleet, 300).map((h) => h.key)).toEqual(['dear-small']);
  });

  it('retires nothing that is not clearly dearer than the best', () => {
    const best = 0.5 / 200;
    const fleet = [host('a', 200, 0.5), host('b', 200, 200 * best * REBALANCE_FACTOR * 0.99)];
    expect(retirements(fleet, 100)).toEqual([]);
    expect(retirements([], 300)).toEqual([]);
  });

  it('reports each retirement with its cost and the best per proof', () => {
    const [r] = retirements([host('a', 200, 0.4), host('b', 200, 1.0)], 150);
    expect(r).toMatchObject({ key: 'b', costPerProof: 0.005, bestCostPerProof: 0.002 });
  });
});
