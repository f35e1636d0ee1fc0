import { describe, expect, it } from 'vitest';
import { asStack } from '../../infra/bench/eval/as-stack.js';
import { EvalWorld } from '../../infra/bench/eval/day.js';
import { EventQueue } from '../../infra/bench/eval/events.js';
import type { Latencies } from '../../infra/bench/eval/lifecycle.js';
import { oursTick, runPolicy } from '../../infra/bench/eval/policies.js';
import { scoreRun } from '../../infra/bench/market-score.js';
import { type MarketOffer, simTrueRate } from '../../infra/bench/market.js';
import { medianOrNull } from '../../infra/bench/policy-bench.js';
import { SimOfferSchema } from '../../infra/sim/scenario.js';
import { simBilledDph } from '../../infra/sim/vast/pricing.js';

/** No create, connect, fitness or destroy latency: every time below follows from the simulator's defaults. */
const LAT: Latencies = { rentSec: 0, hostConnectSec: 0, fitnessSec: 0, destroySec: 0, offerCheckSec: 120 };

/** A 1x RTX 4090 / 504 GiB host proving in 100 s (55 s synthesis, 45 s GPU): 3 proofs at once, 16 workers. */
function host(id: number, more: Partial<MarketOffer> = {}, preemptAfterSec?: number): MarketOffer {
  const offer = SimOfferSchema.parse({
    id,
    machine_id: 60_000 + id,
    host_id: 80_000 + id,
    gpu_name: 'RTX 4090',
    num_gpus: 1,
    gpu_ram: 24564,
    gpu_total_ram: 24564,
    cpu_ram: 516_096,
    dph_total: 0.4 + id / 1000,
    storage_cost: 0.1,
    reliability2: 0.95,
    cuda_max_good: 12.4,
    verification: 'verified',
    sim: {
      host: { proofSec: 100 },
      instance: { fate: 'running', ...(preemptAfterSec !== undefined ? { preemptAfterSec } : {}) },
    },
  });
  return {
    offer,
    trueRate: simTrueRate(100, 1, 516_096),
    searchedDph: offer.dph_total,
    billedDph: simBilledDph(offer, 200),
    listedAtH: 0,
    takenAtH: 1000,
    faults: [],
    fatal: false,
    priceRiseAtH: null,
    degradeAfterH: null,
    preemptAfterH: preemptAfterSec === undefined ? null : preemptAfterSec / 3600,
    ...more,
  };
}

/*
 * Hand-computed boot (infra/sim defaults): created at 0, running at 30 (loading), paramfetch 240 s to 270;
 * warm-up daemon (2 workers) starts 45 s to 315, its first proof 100*0.55*sqrt(10/2) + 150 + 70 synthesis
 * and 45 s GPU = 387.98 s to 702.98; restart with 16 workers 45 s to 747.98, the post-restart proof
 * 55 + 150 + 45 = 250 s: the timed benchmark starts at 997.98.
 */
const RUNNING = 30;
const BENCH_START = 30 + 240 + 45 + (100 * 0.55 * Math.sqrt(5) + 150 + 70 + 45) + 45 + 250;
const req = (m: MarketOffer) => ({ offerId: m.offer.id, minRate: 29, diskGb: 200 });
const SCORE = { timeScale: 1, hours: 24, targetRate: 300, minRate: 29, bootH: 315 / 3600 };

describe('policy evaluator: the event loop', () => {
  it('boots a healthy host to its benchmark at the hand-computed time and promotes it after the full batch', () => {
    const m = host(1);
    const w = new EvalWorld([m], 4 * 3600, LAT, { verdicts: { earlyPromote: false } });
    w.q.at(0, () => w.start(m, req(m)));
    w.q.runUntil(4 * 3600);
    const r = w.rentals[0]!;
    expect(r.runningAtSec).toBe(RUNNING);
    // 12 proofs, 3 callers, one GPU: the first ends at 100 s, then one every 45 s (GPU-bound).
    expect(r.promotedAtSec).toBeCloseTo(BENCH_START + 100 + 11 * 45, 6);
    expect(r.benchRate).toBeCloseTo(Math.round((12 / (595 / 3600)) * 100) / 100, 6);
    expect(r.failureType).toBeNull();
  });

  it('a GPU-bound host under minRate only for filling its pipeline is promoted, not killed: nothing marked', () => {
    // 270 s proofs (148.5 s synthesis, 121.5 s GPU), 3 callers, one GPU: it sustains 3600 / 121.5 = 29.63/h,
    // but the batch ends at 270 + 11 x 121.5 = 1606.5 s: 26.89/h, under 29. Refunding the 148.5 s its GPU
    // waited for the first synthesis: 12 in 1458 s = 29.63/h again.
    const m = host(1, { trueRate: simTrueRate(270, 1, 516_096) });
    m.offer.sim.host.proofSec = 270;
    const w = new EvalWorld([m], 4 * 3600, LAT, { verdicts: { earlyPromote: false } });
    w.q.at(0, () => w.start(m, req(m)));
    w.q.runUntil(4 * 3600);
    const r = w.rentals[0]!;
    expect(m.trueRate).toBeCloseTo(29.63, 2);
    expect(r.failureType).toBeNull();
    expect(r.benchRate).toBeCloseTo(26.89, 2);
    expect(r.promotedAtSec).not.toBeNull();
    expect(w.store.badMachines(4 * 3600)).toEqual([]);
    const s = scoreRun(w.dayRun('ours'), [m], { ...SCORE, hours: 4 });
    expect([s.healthyKilled, s.slowPromoted]).toEqual([0, 0]);
  });

  it('a host preempted mid-benchmark ends HostLost one heartbeat timeout later, billed until then, nothing marked', () => {
    const preemptAt = BENCH_START + 60; // before the batch's first completion (100 s in)
    const m = host(1, {}, preemptAt - RUNNING);
    const w = new EvalWorld([m], 4 * 3600, LAT);
    w.q.at(0, () => w.start(m, req(m)));
    w.q.runUntil(4 * 3600);
    const r = w.rentals[0]!;
    expect(r.failureType).toBe('HostLost');
    expect(r.endedAtSec).toBeCloseTo(preemptAt + 60, 6);
    expect(r.promotedAtSec).toBeNull();
    expect(w.held.size).toBe(0);
    // An inconclusive of a retry type, once: neither marked nor resting (bounded retries allow one).
    expect(w.store.badMachines(r.endedAtSec!)).toEqual([]);
    expect(w.store.resting(r.endedAtSec!, 6 * 3600, 1)).toEqual([]);
    const s = scoreRun(w.dayRun('ours'), [m], { ...SCORE, hours: 4 });
    expect(s.dollars).toBeCloseTo((m.billedDph * (preemptAt + 60 - RUNNING)) / 3600, 9);
    expect(s.proofs).toBe(0);
    expect(s.outcomes).toEqual({ HostLost: 1 });
  });

  it('a price rise on a kept host: killed PriceAboveBudget at the first watch sample after it, paid 1.3x from the rise', () => {
    const m = host(1, { priceRiseAtH: 2 });
    const w = new EvalWorld([m], 24 * 3600, LAT, { verdicts: { earlyPromote: false } });
    w.q.at(0, () => w.start(m, req(m)));
    w.q.runUntil(24 * 3600);
    const r = w.rentals[0]!;
    const promoted = BENCH_START + 595;
    const rise = RUNNING + 2 * 3600;
    // Samples every 300 s from promotion; the 19th is the first at or after the rise.
    const killed = promoted + 300 * Math.ceil((rise - promoted) / 300);
    expect(Math.ceil((rise - promoted) / 300)).toBe(19);
    expect(r.failureType).toBe('PriceAboveBudget');
    expect(r.endedAtSec).toBeCloseTo(killed, 6);
    // The market's cause: nothing marked, but the machine rests (bounded retries) for the window.
    expect(w.store.badMachines(killed)).toEqual([]);
    expect(w.store.resting(killed, 6 * 3600, 1)).toEqual([m.offer.machine_id]);
    const s = scoreRun(w.dayRun('ours'), [m], SCORE);
    const paid = (m.billedDph * (rise - RUNNING) + 1.3 * m.billedDph * (killed - rise)) / 3600;
    expect(s.dollars).toBeCloseTo(paid, 9);
    expect(s.proofs).toBeCloseTo((m.trueRate * (killed - promoted)) / 3600, 6);
    expect(s.outcomes).toEqual({ PriceAboveBudget: 1 });
  });

  it('an offer taken by someone else before the create call: OfferUnavailable, no instance, the next round rents another', () => {
    // Five alike, cheapest first: the run's first round fills the 4 benchmark slots with 1-4; someone takes 1 3 s in.
    const market = [host(1, { takenAtH: 3 / 3600 }), host(2), host(3), host(4), host(5)];
    const w = new EvalWorld(market, 3600, { ...LAT, rentSec: 5 });
    w.q.at(0, () => oursTick(w));
    w.q.runUntil(3600);
    expect(w.rentals.map((r) => r.m.offer.id)).toEqual([1, 2, 3, 4, 5]);
    const [ra] = w.rentals;
    expect(ra!.failureType).toBe('OfferUnavailable');
    expect(ra!.instanceId).toBeNull();
    expect(ra!.endedAtSec).toBe(5);
    // The scaler waits offerCheckSec for taken offers, then its next round starts 5 in the freed slot.
    expect(w.rentals[4]!.runningAtSec).toBe(120 + 5 + 30);
    const day = w.dayRun('ours');
    expect(day.rentals.map((x) => x.offerId)).toEqual([2, 3, 4, 5]);
    expect(day.rentedTwice).toBe(0);
    expect(w.store.badMachines(3600)).toEqual([]);
  });

  it('keep by the dollar: a host over minRate but dearer per proof than 1.5x what the target costs ends PricedOut, nothing marked', () => {
    // Five alike prove ~73 proofs/h each, 363 together: over the day's target of 300 without a sixth.
    const good = [1, 2, 3, 4, 5].map((i) => host(i));
    // The same host at 2.5x the price: its $ per proof 2.5x the target's.
    const dear = host(6, { billedDph: good[0]!.billedDph * 2.5 });
    const w = new EvalWorld([...good, dear], 4 * 3600, LAT, { verdicts: { earlyPromote: false } });
    w.keepByDollar = true;
    for (const m of good) w.q.at(0, () => w.start(m, req(m)));
    w.q.at(60, () => w.start(dear, req(dear)));
    w.q.runUntil(4 * 3600);
    const rd = w.rentals[5]!;
    expect(w.rentals.slice(0, 5).every((r) => r.promotedAtSec !== null)).toBe(true);
    expect(rd.failureType).toBe('PricedOut');
    expect(rd.promotedAtSec).toBeNull();
    expect(rd.endedAtSec).toBeCloseTo(60 + BENCH_START + 595, 6);
    expect(w.store.badMachines(4 * 3600)).toEqual([]);
    // A choice on its measured rate and price, not a verdict on its health: not a healthy host killed.
    const s = scoreRun(w.dayRun('ours'), [...good, dear], { ...SCORE, hours: 4 });
    expect(s.outcomes).toEqual({ promoted: 5, PricedOut: 1 });
    expect(s.healthyKilled).toBe(0);
  });

  it('keep by the dollar: the same dear host is kept while the fleet needs it for the target', () => {
    const good = host(1);
    const dear = host(2, { billedDph: good.billedDph * 2.5 });
    const w = new EvalWorld([good, dear], 4 * 3600, LAT, { verdicts: { earlyPromote: false } });
    w.keepByDollar = true;
    w.q.at(0, () => w.start(good, req(good)));
    w.q.at(60, () => w.start(dear, req(dear)));
    w.q.runUntil(4 * 3600);
    expect(w.rentals.map((r) => r.failureType)).toEqual([null, null]);
    expect(w.rentals[1]!.promotedAtSec).not.toBeNull();
  });

  it('rebalancing: with the target met without it, the dearest promoted host is retired PricedOut at the scaler run', () => {
    const market = [host(1), host(2), host(3, { billedDph: 1.2 })];
    const w = new EvalWorld(market, 4 * 3600, LAT, { verdicts: { earlyPromote: false } });
    for (const m of market) w.q.at(0, () => w.start(m, req(m)));
    const promotedAt = BENCH_START + 595;
    // At the first run after promotion, a target of the two cheap hosts' rate: the dear one is surplus.
    w.q.at(promotedAt + 1, () => {
      const fleet = w.store.rented().filter((r) => r.outcome === 'promoted');
      expect(fleet).toHaveLength(3);
      w.retire(w.rentals[2]!.key);
    });
    w.q.runUntil(4 * 3600);
    expect(w.rentals.map((r) => r.failureType)).toEqual([null, null, 'PricedOut']);
    expect(w.rentals[2]!.endedAtSec).toBeCloseTo(promotedAt + 1, 6);
    expect(w.held.has(3)).toBe(false);
    const s = scoreRun(w.dayRun('ours'), market, { ...SCORE, hours: 4 });
    expect(s.healthyKilled).toBe(0);
  });

  it('a daemon that crashes mid-benchmark is killed DaemonCrashed at that completion and its machine marked', () => {
    // crashAfterProofs 3: the post-restart warm-up is the engine's first, so the 3rd benchmark proof kills it.
    const m = host(1);
    const crashing: MarketOffer = {
      ...m,
      offer: {
        ...m.offer,
        sim: {
          ...m.offer.sim,
          host: { ...m.offer.sim.host, faults: { ...m.offer.sim.host.faults, crashAfterProofs: 3 } },
        },
      },
    };
    const w = new EvalWorld([crashing], 4 * 3600, LAT);
    w.q.at(0, () => w.start(crashing, req(crashing)));
    w.q.runUntil(4 * 3600);
    const r = w.rentals[0]!;
    expect(r.failureType).toBe('DaemonCrashed');
    expect(r.endedAtSec).toBeCloseTo(BENCH_START + 190, 6);
    expect(w.store.badMachines(r.endedAtSec!)).toEqual([m.offer.machine_id]);
  });
});

describe('policy evaluator: helpers', () => {
  it('runs events in time order, ties in the order scheduled, and leaves the ones after the day unrun', () => {
    const q = new EventQueue();
    const seen: string[] = [];
    q.at(10, () => seen.push('b'));
    q.at(5, () => seen.push('a'));
    q.at(10, () => {
      seen.push('c');
      q.at(12, () => seen.push('d'));
    });
    q.at(30, () => seen.push('late'));
    q.runUntil(20);
    expect(seen).toEqual(['a', 'b', 'c', 'd']);
  });

  it('takes the median with a missing figure as the worst', () => {
    expect(medianOrNull([3, 1, 2])).toBe(2);
    expect(medianOrNull([1, null, null])).toBeNull();
    expect(medianOrNull([1, 2, null, 4])).toBe(3);
  });
});

describe('policy evaluator: the real-stack configuration', () => {
  it("restates the real-stack day's compressed timeouts and heartbeat in real seconds", () => {
    const s = asStack(0.04);
    // A 20 s floor on the 300 s stall timeout, production's 60 s heartbeat and the 5 s taken-offer wait, all wall time.
    expect(s.lifecycle.timeouts?.paramfetchStallSec).toBeCloseTo(500, 9);
    expect(s.lifecycle.timeouts?.heartbeatSec).toBeCloseTo(1500, 9);
    expect(s.lifecycle.timeouts?.proofDeadlineSec).toBeCloseTo(1200, 9);
    expect(s.latencies.offerCheckSec).toBeCloseTo(125, 9);
    expect(s.extraStartRun).toBe(true);
  });

  it('the extra scaler run at the start sees the first one’s lifecycles: the benchmark cap holds over both', () => {
    const market = [1, 2, 3, 4, 5, 6].map((i) => host(i));
    const once = new EvalWorld(market, 60, LAT);
    runPolicy(once, 'ours');
    const twice = new EvalWorld(market, 60, LAT);
    runPolicy(twice, 'ours', { extraStartRun: true });
    expect(once.rentals.map((r) => r.m.offer.id)).toEqual([1, 2, 3, 4]);
    expect(twice.rentals.map((r) => r.m.offer.id)).toEqual([1, 2, 3, 4]);
  });
});
