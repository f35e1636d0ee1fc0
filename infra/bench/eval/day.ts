import { planBenchmark } from '../../../workflows/domain/policy/concurrency.js';
import { withDefaults } from '../../../workflows/domain/policy/defaults.js';
import type { FailureType } from '../../../workflows/domain/failures.js';
import { keepByDollar, PRICED_OUT } from '../../../workflows/domain/policy/keep-by-dollar.js';
import type { LifecycleInput, LifecycleRequest } from '../../../workflows/domain/types.js';
import type { DayRun, Rental, RunPolicy } from '../market-day.js';
import { MARKET_PARAMS } from '../market-params.js';
import type { MarketOffer } from '../market.js';
import { EventQueue } from './events.js';
import { benchmarkCourse, bootCourse, type Ending, type Latencies, REAL_LATENCIES } from './lifecycle.js';
import { listed } from './search.js';
import { EvalStore } from './store.js';
import { watchCourse } from './watch.js';

/** One lifecycle of the evaluated day, times in seconds into the day. */
export interface EvalRental {
  key: string;
  m: MarketOffer;
  input: LifecycleInput;
  /** Null until the create call succeeds (an offer taken first never gets an instance). */
  instanceId: number | null;
  runningAtSec: number | null;
  promotedAtSec: number | null;
  /** When it entered paramfetch and its timed benchmark, where it got there. */
  paramfetchAtSec: number | null;
  benchmarkAtSec: number | null;
  endedAtSec: number | null;
  destroyedAtSec: number | null;
  failureType: FailureType | null;
  benchRate: number | null;
}

/**
 * The day's world: the event queue, the store, the instances held, and how a lifecycle runs from start
 * to destroy. The policies (ours: the scaler's functions; old: the seeds' manager) start lifecycles on it.
 */
export class EvalWorld {
  readonly q = new EventQueue();
  readonly store = new EvalStore();
  readonly rentals: EvalRental[] = [];
  /** Offer id -> the rental holding it (an instance up, not yet destroyed). */
  readonly held = new Map<number, EvalRental>();
  private nextInstance = 1;
  /** Whether lifecycles apply keep by the dollar at their verdict (ours does; old does not). */
  keepByDollar = false;

  constructor(
    readonly market: readonly MarketOffer[],
    readonly dayEndSec: number,
    readonly lat: Latencies = REAL_LATENCIES,
    /** Overrides every lifecycle gets (the real-stack day's timeouts, for the agreement check). */
    private readonly lifecycle: Omit<LifecycleRequest, 'offerId'> = {},
  ) {}

  /** Lifecycles still running (their rental keys): what the scaler's visibility query returns. */
  running(): EvalRental[] {
    return this.rentals.filter((r) => r.destroyedAtSec === null);
  }

  /** Starts a lifecycle on `m` now: its row is written at once, the create call lands `rentSec` later. */
  start(m: MarketOffer, request: LifecycleRequest): EvalRental {
    const r: EvalRental = {
      key: `rental-${this.rentals.length + 1}`,
      m,
      input: withDefaults({ ...this.lifecycle, ...request }),
      instanceId: null,
      runningAtSec: null,
      promotedAtSec: null,
      paramfetchAtSec: null,
      benchmarkAtSec: null,
      endedAtSec: null,
      destroyedAtSec: null,
      failureType: null,
      benchRate: null,
    };
    this.rentals.push(r);
    const now = this.q.now;
    this.store.open({
      rentalKey: r.key,
      workflowId: r.key,
      offerId: m.offer.id,
      machineId: m.offer.machine_id,
      gpuName: m.offer.gpu_name,
      numGpus: m.offer.num_gpus,
      cpuRamMb: m.offer.cpu_ram,
      dphTotal: m.billedDph,
      updatedAtSec: now,
    });
    this.q.at(now + this.lat.rentSec, () => this.rent(r));
    return r;
  }

  /** Whether the create call at `atSec` finds the offer (listed, not taken, not held). */
  rentable(m: MarketOffer, atSec: number): boolean {
    return listed(m, atSec) && !this.held.has(m.offer.id);
  }

  private rent(r: EvalRental): void {
    const now = this.q.now;
    if (!this.rentable(r.m, now)) return this.end(r, { atSec: now, failureType: 'OfferUnavailable' });
    r.instanceId = this.nextInstance++;
    this.held.set(r.m.offer.id, r);
    const plan = planBenchmark(r.m.offer.num_gpus, r.m.offer.cpu_ram, r.input.concurrency);
    const boot = bootCourse(r.m, now, r.input, plan, this.lat);
    r.runningAtSec = boot.runningAtSec;
    const fetchAt =
      boot.runningAtSec === null ? null : boot.runningAtSec + this.lat.hostConnectSec + this.lat.fitnessSec;
    if (fetchAt !== null && !(boot.end && boot.end.atSec < fetchAt)) r.paramfetchAtSec = fetchAt;
    if (boot.end) return this.q.at(boot.end.atSec, () => this.end(r, boot.end));
    const running = boot.runningAtSec;
    this.q.at(boot.benchmarkAtSec, () => {
      // The machine's standing is read as the benchmark starts (probation: no early promote).
      r.benchmarkAtSec = this.q.now;
      const standing = this.store.standing(r.m.offer.machine_id, this.q.now);
      const out = benchmarkCourse(r.m, running, this.q.now, r.input, plan, standing);
      this.q.at(out.atSec, () => {
        if (!out.report) return this.end(r, out);
        r.benchRate = out.rate;
        this.store.benchmarked(r.key, out.rate, this.q.now);
        if (out.failureType !== null) return this.end(r, { atSec: this.q.now, failureType: out.failureType });
        if (this.pricedOut(r, out.keepRate)) return this.end(r, { atSec: this.q.now, failureType: PRICED_OUT });
        this.promote(r, running, out.benchCompleted);
      });
    });
  }

  /** Keep by the dollar, for the policies that apply it: a host dearer per proof than the fleet allows. */
  private pricedOut(r: EvalRental, rate: number): boolean {
    if (!this.keepByDollar) return false;
    const promoted = this.store
      .rented()
      .filter((row) => row.outcome === 'promoted')
      .map((row) => ({ rate: row.benchRate ?? 0, dph: row.dphTotal ?? 0 }));
    return !keepByDollar({ rate, dph: r.m.billedDph }, promoted, MARKET_PARAMS.fleet.targetRate.value).keep;
  }

  /** Rebalancing: a promoted host retired for a cheaper one (the market ending, at once). */
  retire(key: string): void {
    const r = this.rentals.find((x) => x.key === key);
    if (!r || r.endedAtSec !== null || r.promotedAtSec === null) return;
    this.end(r, { atSec: this.q.now, failureType: PRICED_OUT });
  }

  private promote(r: EvalRental, runningAtSec: number, benchCompleted: number): void {
    const now = this.q.now;
    r.promotedAtSec = now;
    this.store.finish(r.key, null, now, r.input.verdicts.transientMarkSec);
    const ending = watchCourse(
      {
        m: r.m,
        runningAtSec,
        promotedAtSec: now,
        benchCompleted,
        billedDph: r.m.billedDph,
        bootH: MARKET_PARAMS.fleet.bootSec.value / 3600,
      },
      r.input,
      this.dayEndSec,
    );
    if (ending) this.q.at(ending.atSec, () => this.end(r, ending));
  }

  /** The verdict recorded (and the bad-machine rule applied), then the instance destroyed. */
  private end(r: EvalRental, e: Ending): void {
    // A rental ends once: a retired host's watch ending, scheduled at its promotion, is then moot.
    if (r.endedAtSec !== null) return;
    r.endedAtSec = e.atSec;
    r.failureType = e.failureType;
    this.store.finish(r.key, e.failureType, e.atSec, r.input.verdicts.transientMarkSec);
    const destroyAt = r.instanceId === null ? e.atSec : e.atSec + this.lat.destroySec;
    this.q.at(destroyAt, () => {
      r.destroyedAtSec = this.q.now;
      this.store.destroyed(r.key);
      if (this.held.get(r.m.offer.id) === r) this.held.delete(r.m.offer.id);
    });
  }

  /** The day as the real-stack market day reports it (ms, time scale 1), for the same scoring. */
  dayRun(policy: RunPolicy): DayRun {
    const endMs = this.dayEndSec * 1000;
    const created = this.rentals.filter((r) => r.instanceId !== null);
    const within = (sec: number | null) => (sec !== null && sec < this.dayEndSec ? sec * 1000 : null);
    const rentals: Rental[] = created.map((r) => {
      const endAt = Math.min(r.destroyedAtSec === null ? Infinity : r.destroyedAtSec * 1000, endMs);
      const rise =
        r.runningAtSec !== null && r.m.priceRiseAtH !== null ? r.runningAtSec + r.m.priceRiseAtH * 3600 : null;
      const ended = r.endedAtSec !== null && r.endedAtSec < this.dayEndSec;
      return {
        offerId: r.m.offer.id,
        instanceId: r.instanceId!,
        runningAt: r.runningAtSec === null ? null : r.runningAtSec * 1000,
        endAt,
        priceRaisedAt: rise !== null && rise * 1000 < endAt ? rise * 1000 : null,
        outcome: ended && r.failureType !== null ? 'killed' : r.promotedAtSec !== null ? 'promoted' : null,
        failureType: ended ? r.failureType : null,
        promotedAt: r.promotedAtSec === null ? null : r.promotedAtSec * 1000,
        paramfetchAt: within(r.paramfetchAtSec),
        benchmarkAt: within(r.benchmarkAtSec),
      };
    });
    return {
      policy,
      t0: 0,
      end: endMs,
      rentals,
      leftRunning: 0,
      rentedTwice: created.length - new Set(created.map((r) => r.m.offer.id)).size,
    };
  }
}
