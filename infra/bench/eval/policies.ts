import { DEFAULT_INCONCLUSIVE_RETRIES, DEFAULT_INCONCLUSIVE_WINDOW_SEC } from '../../../workflows/fleet-scaler.js';
import { REBALANCE_FACTOR, retirements } from '../../../workflows/domain/policy/keep-by-dollar.js';
import type { FleetTarget } from '../../../workflows/domain/policy/offer-ranking.js';
import { portfolioFleet, rankForRunByValue } from '../../../workflows/domain/policy/scaler-ranking.js';
import { choosePortfolio, type ValuedOffer } from '../../../workflows/domain/policy/value-ranking.js';
import type { RunPolicy } from '../market-day.js';
import { MARKET_PARAMS } from '../market-params.js';
import type { MarketOffer } from '../market.js';
import { oldPolicyChoice } from '../old-policy.js';
import type { EvalRental, EvalWorld } from './day.js';
import { candidate, searchMarket } from './search.js';

const F = MARKET_PARAMS.fleet;

/** The market day's scaler input, in real units (the real-stack day divides rates by its time scale). */
export const TARGET: FleetTarget = {
  targetRate: F.targetRate.value,
  maxDph: F.maxDph.value,
  maxInstances: F.maxInstances.value,
  maxConcurrentBenchmarks: F.maxConcurrentBenchmarks.value,
  explorationSlots: F.explorationSlots.value,
  minRate: F.minRate.value,
};

/** The scaler's schedule interval (the real-stack day runs it every 300 s of simulated time). */
export const SCALER_INTERVAL_SEC = 300;

/**
 * One run of the fleet scaler (workflows/fleet-scaler.ts, on-demand only), its choices made by the
 * product's functions: portfolioFleet, retirements (rebalancing), rankForRunByValue, choosePortfolio. A
 * started offer taken before the create call fails within `offerCheckSec` and the next round replaces
 * it, three rounds at most.
 */
export function oursTick(w: EvalWorld): void {
  const now = w.q.now;
  const rows = w.store.rented();
  const running = w.running().map((r) => ({ workflowId: r.key, rentalKey: r.key }));
  const samples = w.store.perfSamples();
  const fleet = portfolioFleet(rows, running, samples);
  const retired = new Set(retirements(fleet.promoted, TARGET.targetRate, REBALANCE_FACTOR).map((h) => h.key));
  for (const key of retired) w.retire(key);
  const promoted = fleet.promoted.filter((p) => !retired.has(p.key));
  const bad = w.store.badMachines(now);
  const resting = w.store.resting(now, DEFAULT_INCONCLUSIVE_WINDOW_SEC, DEFAULT_INCONCLUSIVE_RETRIES);
  const found = searchMarket(w.market, now, new Set(w.held.keys()), true);
  const byId = new Map(found.map((m) => [m.offer.id, m]));
  let ranked = rankForRunByValue(found.map(candidate), rows, samples, [...bad, ...resting], TARGET.minRate);
  let live: ValuedOffer[] = [];
  for (let round = 0; round < 3; round++) {
    const startAt = now + round * w.lat.offerCheckSec;
    const fleetNow = {
      promoted,
      inFlight: [...fleet.inFlight, ...live.map((o) => ({ dph: o.dphTotal, predictedRate: o.predictedRate }))],
    };
    const chosen = choosePortfolio(ranked, fleetNow, TARGET, REBALANCE_FACTOR);
    if (chosen.length === 0) break;
    const drop = new Set(chosen.map((o) => o.offerId));
    ranked = ranked.filter((o) => !drop.has(o.offerId));
    live = [...live, ...chosen];
    const taken = chosen.filter((o) => !w.rentable(byId.get(o.offerId)!, startAt + w.lat.rentSec));
    // Round 0 starts at once, so a scaler run at the same instant sees these lifecycles' rows.
    for (const o of chosen)
      if (round === 0) startOurs(w, byId.get(o.offerId)!);
      else w.q.at(startAt, () => startOurs(w, byId.get(o.offerId)!));
    if (taken.length === 0) break;
    const gone = new Set(taken.map((o) => o.offerId));
    live = live.filter((o) => !gone.has(o.offerId));
  }
}

function startOurs(w: EvalWorld, m: MarketOffer): EvalRental {
  return w.start(m, { offerId: m.offer.id, minRate: TARGET.minRate, diskGb: F.diskGb.value });
}

/**
 * One round of the seeds' manager (old-policy.ts, the same choice the real-stack day makes): the
 * lifecycles it started that are still running count, promoted ones at their benchmark's rate.
 */
export function oldTick(w: EvalWorld, started: Set<string>): void {
  const now = w.q.now;
  const live = w
    .running()
    .filter((r) => started.has(r.key))
    .map((r) => ({
      machineId: r.m.offer.machine_id,
      searchedDph: r.m.searchedDph,
      ...(r.promotedAtSec !== null ? { promotedRate: r.benchRate ?? 0 } : {}),
    }));
  const found = searchMarket(w.market, now, new Set(w.held.keys()), false);
  const byId = new Map(found.map((m) => [m.offer.id, m]));
  const offers = found.map((m) => ({ id: m.offer.id, machine_id: m.offer.machine_id, dph_total: m.searchedDph }));
  const chosen = oldPolicyChoice(live, offers, new Set(w.store.badMachines(now)), TARGET);
  for (const x of chosen) {
    const m = byId.get(x.id)!;
    const r = w.start(m, {
      offerId: m.offer.id,
      minRate: TARGET.minRate,
      earlyStopAfterProofs: 0,
      benchmarkProofs: 12,
      diskGb: F.diskGb.value,
    });
    started.add(r.key);
  }
}

/**
 * Runs one policy through the day: its ticks every scaler interval from the start, the market on its own
 * clock. `extraStartRun`: the real-stack day triggers its scaler schedule once at the start, besides the
 * schedule's own first action (eval/as-stack.ts).
 */
export function runPolicy(w: EvalWorld, policy: RunPolicy, o: { extraStartRun?: boolean } = {}): void {
  const started = new Set<string>();
  w.keepByDollar = policy === 'ours';
  if (o.extraStartRun && policy === 'ours') w.q.at(0, () => oursTick(w));
  for (let t = 0; t < w.dayEndSec; t += SCALER_INTERVAL_SEC)
    w.q.at(t, () => (policy === 'ours' ? oursTick(w) : oldTick(w, started)));
  w.q.runUntil(w.dayEndSec);
}
