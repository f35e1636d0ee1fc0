import { describe, expect, it } from 'vitest';
import { bidFor, raiseTo, stoppedByMarket } from '../../workflows/domain/policy/bid.js';
import { bidCandidates, chooseMixed, parseCapacityMix } from '../../workflows/domain/policy/capacity-mix.js';
import { REBALANCE_FACTOR } from '../../workflows/domain/policy/keep-by-dollar.js';
import type { FleetTarget, OfferCandidate } from '../../workflows/domain/policy/offer-ranking.js';
import { rankByValue } from '../../workflows/domain/policy/value-ranking.js';
import type { OfferFacts } from '../../workflows/domain/types.js';

const policy = { marginPct: 15, maxBidDph: 0.5, rebids: 1 };
const offer = (id: number, dph: number, minBid: number | null): OfferFacts => ({
  offerId: id,
  machineId: id,
  hostId: 1,
  gpuName: 'A40',
  numGpus: 1,
  cpuRamMb: 256_000,
  dphTotal: dph,
  storageCost: 0.1,
  minBid,
});
const target: FleetTarget = {
  targetRate: 100,
  maxDph: 10,
  maxInstances: 10,
  maxConcurrentBenchmarks: 10,
  explorationSlots: 0,
  minRate: 10,
};
// Each machine's own benchmark: 30 proofs/h, so every offer is expected at 30.
const samples = [1, 2, 3, 4].map((machineId) => ({
  machineId,
  gpuName: 'A40',
  numGpus: 1,
  cpuRamMb: 256_000,
  rate: 30,
}));
const rank = (offers: OfferCandidate[]) => rankByValue(offers, samples, [], 10);
const mix = { onDemandFloorRate: 40, bidMarginPct: 15, maxBidFraction: 0.8, rebids: 1 };

describe('bids', () => {
  it('bids min_bid plus the margin, rounded up to $0.001/h, never above the cap', () => {
    expect(bidFor(0.2, policy, 1)).toBe(0.23);
    expect(bidFor(0.3001, policy, 1)).toBe(0.346);
    expect(bidFor(0.44, policy, 1)).toBeNull();
    expect(bidFor(0, policy, 1)).toBe(0.001);
  });

  it('raises a bid only when min_bid is within half the margin of it, and only within the cap', () => {
    expect(raiseTo(0.345, 0.3, policy, 1)).toBeNull();
    expect(raiseTo(0.345, 0.33, policy, 1)).toBe(0.38);
    expect(raiseTo(0.345, 0.45, policy, 1)).toBeNull();
    expect(raiseTo(0.345, null, policy, 1)).toBeNull();
  });

  it('reads a stop by the market from actual_status or the three state fields, not from a loading instance', () => {
    const base = {
      actualStatus: 'running',
      intendedStatus: 'running',
      curState: 'running',
      nextState: 'running',
      minBidDph: 0.3,
      statusMsg: null,
    };
    expect(stoppedByMarket(base, 0.345)).toBeNull();
    expect(stoppedByMarket({ ...base, actualStatus: 'loading' }, 0.345)).toBeNull();
    expect(stoppedByMarket({ ...base, actualStatus: 'stopped', minBidDph: 0.4 }, 0.345)).toMatch(
      /min_bid \$0\.4\/h > our bid/,
    );
    expect(
      stoppedByMarket({ ...base, actualStatus: null, intendedStatus: 'stopped', nextState: 'stopped' }, 0.345),
    ).not.toBeNull();
  });
});

describe('the capacity mix', () => {
  it('prices interruptible candidates at the bid plus storage and drops those whose bid passes the cap', () => {
    // 200 GB at 0.1 $/GB/month is 0.0278 $/h of storage; compute 0.5 - 0.0278, cap 80 % of it = 0.377.
    const c = bidCandidates([offer(1, 0.5, 0.2), offer(2, 0.5, 0.35), offer(3, 0.5, null)], mix, 200);
    expect(c.map((o) => o.offerId)).toEqual([1]);
    expect(c[0]?.bid).toMatchObject({ priceDph: 0.23, maxBidDph: 0.377, marginPct: 15, rebids: 1 });
    expect(c[0]?.dphTotal).toBeCloseTo(0.23 + (200 * 0.1) / 720, 6);
  });

  it('rents on-demand up to the floor, interruptible above it, on-demand again only where no bid fits', () => {
    const od = rank([offer(1, 0.5, 0.2), offer(2, 0.6, 0.2), offer(3, 0.7, 0.2), offer(4, 0.8, 0.2)]);
    const spot = rank(bidCandidates([offer(1, 0.5, 0.2), offer(2, 0.6, 0.2)], mix, 200));
    const now = { promoted: [], inFlight: [] };
    const chosen = chooseMixed(od, spot, now, target, mix, REBALANCE_FACTOR);
    // Floor 40 proofs/h = two on-demand hosts at 30; then the two machines left with bids are 3, 4 (no min_bid
    // offers for them), so interruptible has none left that are not already rented: on-demand fills.
    expect(chosen.map((o) => [o.offerId, o.interruptible])).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, false],
    ]);
    const spot2 = rank(bidCandidates([offer(3, 0.7, 0.2), offer(4, 0.8, 0.2)], mix, 200));
    const mixed = chooseMixed(od, spot2, now, target, mix, REBALANCE_FACTOR);
    expect(mixed.map((o) => [o.offerId, o.interruptible])).toEqual([
      [1, false],
      [2, false],
      [3, true],
      [4, true],
    ]);
  });

  it('counts interruptible rentals already running above the floor, not toward it', () => {
    const od = rank([offer(1, 0.5, 0.2)]);
    const spot = rank(bidCandidates([offer(2, 0.6, 0.2)], mix, 200));
    const now = { promoted: [{ rate: 60, dph: 0.3, interruptible: true }], inFlight: [] };
    // 60 proofs/h interruptible, none on-demand: the floor still wants on-demand; 30 more reaches 90 < 100.
    const chosen = chooseMixed(od, spot, now, target, mix, REBALANCE_FACTOR);
    expect(chosen.map((o) => [o.offerId, o.interruptible])).toEqual([
      [1, false],
      [2, true],
    ]);
  });

  it('at the target: one replacement from either list, the best per dollar, only if clearly cheaper per proof', () => {
    const od = rank([offer(1, 0.5, 0.2)]);
    const spot = rank(bidCandidates([offer(2, 0.6, 0.2)], mix, 200)); // bid $0.23 + storage: 30/h for ~$0.26/h
    // 100 proofs/h at $3/h: $0.03 per proof, over 1.25x what either would cost; the bid's is the lower.
    const now = { promoted: [{ rate: 100, dph: 3 }], inFlight: [] };
    const chosen = chooseMixed(od, spot, now, target, mix, REBALANCE_FACTOR);
    expect(chosen.map((o) => [o.offerId, o.interruptible])).toEqual([[2, true]]);
    const cheapFleet = { promoted: [{ rate: 100, dph: 0.5 }], inFlight: [] };
    expect(chooseMixed(od, spot, cheapFleet, target, mix, REBALANCE_FACTOR)).toEqual([]);
  });

  it('shares the run’s exploration slots between the parts', () => {
    const unseen = (id: number, dph: number, minBid: number): OfferFacts => ({
      ...offer(id, dph, minBid),
      gpuName: 'B200',
    });
    const od = rank([unseen(11, 0.5, 0.2), offer(1, 0.5, 0.2)]);
    const spot = rank(bidCandidates([unseen(12, 0.6, 0.2)], mix, 200));
    const chosen = chooseMixed(
      od,
      spot,
      { promoted: [], inFlight: [] },
      { ...target, explorationSlots: 1 },
      mix,
      REBALANCE_FACTOR,
    );
    // The on-demand part explores B200 below the floor; the interruptible part has no slot left for another.
    expect(chosen.filter((o) => o.source === 'unknown').map((o) => o.offerId)).toEqual([11]);
  });

  it('refuses a bad mix, naming the field', () => {
    const r = parseCapacityMix({ ...mix, maxBidFraction: 1.5 });
    expect(r).toMatchObject({ ok: false });
    expect(!r.ok && r.error).toMatch(/capacity\.maxBidFraction/);
    expect(parseCapacityMix({ ...mix, extra: 1 })).toMatchObject({ ok: false });
  });
});
