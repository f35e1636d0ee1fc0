import {
  ActivityFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { StoreActivities } from '../../activities/store/activities.js';
import { lifecycleStoreOptions } from '../activity-options.js';
import type { Classified } from '../classify.js';
import { lifecycleStatusQuery } from '../definitions.js';
import { FailureType as FT, type FailureType } from '../domain/failures.js';
import { fleetMetrics, lifecycleLog } from '../metrics.js';
import type { NotifyEvent } from '../../activities/notify/event.js';
import { notify } from '../notify.js';
import type { Standing } from '../domain/policy/early-promote-plan.js';
import { verdictFor } from '../domain/policy/verdicts.js';
import { costKeeper } from './cost.js';
import { realMs } from '../domain/policy/clock.js';
import { formatUsd } from '../domain/policy/cost.js';
import { SA } from '../domain/search-attributes.js';
import { waitingStore } from '../store-wait.js';
import type { BenchmarkReport, LifecycleInput, LifecycleStatus, RentedInstance, Stage } from '../domain/types.js';
import { lifecycleView } from '../ui/lifecycle-view.js';
import { storeSummary } from '../ui/summaries.js';
import { summarized } from '../ui/summarized.js';

export interface LifecycleIds {
  rentalKey: string;
  workflowId: string;
}

function initialStatus(input: LifecycleInput, ids: LifecycleIds): LifecycleStatus {
  const resumed = input.resume;
  return {
    stage: resumed ? 'promoted' : 'provisioning',
    offerId: input.offerId,
    rentalKey: ids.rentalKey,
    rentalNumber: null,
    instanceId: resumed?.rented.instanceId ?? null,
    gpuName: resumed?.rented.offer.gpuName ?? null,
    benchmark: null,
    rate: resumed?.benchRate ?? null,
    startedAt: new Date().toISOString(),
    stageDeadline: null,
    failureType: null,
    cause: null,
    waitingOn: null,
    clock: input.clock,
  };
}

/**
 * Everything a lifecycle tells the outside, in one place: the status query, search attributes, metrics,
 * log lines and the store's events and records. The runbook says what happened; the journal writes it.
 */
export class Journal {
  /** What the outside reads (the status query, the UI's details); only the journal's methods change it. */
  private readonly st: LifecycleStatus;
  /**
   * The store, each write queued behind the earlier ones (a row before its events, Postgres's order) and
   * waiting out an outage; awaiting a call waits for that write. Decisions never await one: the journal's
   * own records are queued without waiting, and `recorded()` waits for all before the run ends.
   */
  readonly store: StoreActivities;
  /** One round of the store (its retry budget), unqueued: for reads a decision needs, with a fallback. */
  private readonly readOnce: StoreActivities;
  /** The queue's tail: settles when every write queued so far has reached Postgres. */
  private queue: Promise<void> = Promise.resolve();
  /** The first write Postgres refused (our bug, `Internal`): thrown by `recorded()`. */
  private refusal: unknown = null;
  /** Writes queued and not yet settled. */
  private unwritten = 0;
  /** The UI's current details ("benchmark 7 of 12 proofs · 41 proofs/h so far · 23 min left · $0.42 so far"). */
  readonly view: ReturnType<typeof lifecycleView>;
  /** What the rental has cost (policy/cost.ts); opened when Vast bills it, carried through continue-as-new. */
  readonly cost: ReturnType<typeof costKeeper>;
  private seqNo: number;
  private inst: RentedInstance | null;
  /** Workflow time of the rent, until the verdict: the time to verdict's start. */
  private rentedAtMs: number | null = null;

  constructor(
    private readonly input: LifecycleInput,
    readonly ids: LifecycleIds,
  ) {
    const status = initialStatus(input, ids);
    this.st = status;
    const cost = costKeeper(input.clock, input.resume?.cost);
    this.cost = cost;
    const view = lifecycleView(status, () => cost.now(), input.clock);
    this.view = view;
    const showWait = (wait: LifecycleStatus['waitingOn']) => {
      status.waitingOn = wait;
      view.refresh();
    };
    const t = input.timeouts;
    setHandler(lifecycleStatusQuery, () => ({
      ...status,
      cost: cost.now(),
      costLedger: cost.ledger(),
    }));
    // Store calls are regular activities, not local ones: the queue below runs beside the lifecycle, and a
    // local activity's result is not an event of its own, so a replay may hand it to the workflow at another
    // point than the run did and schedule the queue's next write before or after a host step (a
    // nondeterminism error). Regular activities' results replay where they happened. A Postgres outage makes
    // the writes wait (status.waitingOn says so), never fail the lifecycle; the UI's timeline names each.
    const firstRound = summarized(proxyActivities<StoreActivities>(lifecycleStoreOptions(t, 'first')), storeSummary);
    this.readOnce = firstRound;
    this.store = this.queued(
      waitingStore(
        firstRound,
        summarized(proxyActivities<StoreActivities>(lifecycleStoreOptions(t, 'again')), storeSummary),
        showWait,
      ),
    );
    // For readers without a query (the CLI's fleet list): the clock its ages convert with. Continue-as-new
    // carries the memo on (watch.ts).
    if (!input.resume) upsertMemo({ clock: input.clock });
    this.seqNo = input.resume?.seq ?? 0;
    this.inst = input.resume?.rented ?? null;
    if (input.resume) {
      if (input.resume.rentedAtMs !== undefined) view.rented(input.resume.rented.offer, input.resume.rentedAtMs);
      view.refresh();
    }
  }

  /** `store`'s calls go through the one queue, in order, never cancelled: they are records. */
  private queued<S extends object>(store: S): S {
    return new Proxy(store, {
      get: (target, prop, receiver) => {
        const call: unknown = Reflect.get(target, prop, receiver);
        if (typeof call !== 'function') return call;
        return (...args: unknown[]) => this.enqueue(() => (call as (...a: unknown[]) => Promise<unknown>)(...args));
      },
    });
  }

  private enqueue<T>(write: () => Promise<T>): Promise<T> {
    this.unwritten++;
    const run = this.queue.then(() => CancellationScope.nonCancellable(write));
    this.queue = run.then(
      () => {
        this.unwritten--;
      },
      (err: unknown) => {
        this.unwritten--;
        if (!isCancellation(err)) this.refusal ??= err;
      },
    );
    return run;
  }

  /** Records still waiting for the store (an outage): the watch keeps watching rather than wait to continue as new. */
  get writing(): boolean {
    return this.unwritten > 0;
  }

  /** A record no decision waits for: queued, its failure kept for `recorded()`. Resolves at once. */
  private later(write: Promise<unknown>): Promise<void> {
    write.catch(() => undefined);
    return Promise.resolve();
  }

  /** Waits until every record queued so far reached the store (an outage is waited out); throws a refusal. */
  async recorded(): Promise<void> {
    await this.queue;
    this.throwIfRefused();
  }

  /** A write Postgres refused is our bug: the lifecycle ends `Internal` at its next decision. */
  throwIfRefused(): void {
    if (this.refusal !== null) throw this.refusal;
  }

  /**
   * A read a decision needs, one store round only: on failure the caller takes the conservative choice,
   * and `unread` says why (into history with the decision's event).
   */
  private async readOnceOr<T>(
    read: (store: StoreActivities) => Promise<T>,
  ): Promise<{ value: T } | { unread: string }> {
    try {
      return { value: await read(this.readOnce) };
    } catch (err) {
      if (isCancellation(err)) throw err;
      const cause = err instanceof ActivityFailure ? err.cause : err;
      return { unread: (cause instanceof Error ? cause.message : String(cause)).slice(0, 300) };
    }
  }

  /** The machine's standing; unread, probation (the whole batch), with why. */
  async machineStanding(machineId: number): Promise<{ standing: Standing; unread?: string }> {
    const r = await this.readOnceOr((s) => s.machineStanding({ machineId }));
    return 'value' in r ? { standing: r.value.standing } : { standing: 'probation', unread: r.unread };
  }

  /** Which rental of its offer this is; unknown (null) when the store cannot say in one round. */
  private async rentalNumber(): Promise<number | null> {
    const r = await this.readOnceOr((s) =>
      s.rentalNumber({ workflowId: this.ids.workflowId, rentalKey: this.ids.rentalKey }),
    );
    return 'value' in r ? r.value : null;
  }

  /** The fleet's other promoted hosts (measured rate, billed $/h); null when the store cannot say in one round. */
  async otherPromotedHosts(): Promise<Array<{ rate: number; dph: number }> | null> {
    const r = await this.readOnceOr((s) => s.rentedInstances());
    if (!('value' in r)) return null;
    return r.value
      .filter((row) => row.outcome === 'promoted' && row.rentalKey !== this.ids.rentalKey)
      .map((row) => ({ rate: row.benchRate ?? 0, dph: row.dphTotal ?? 0 }));
  }

  /** The status as the outside reads it. */
  get status(): Readonly<LifecycleStatus> {
    return this.st;
  }

  get rented(): RentedInstance | null {
    return this.inst;
  }

  /** Events recorded so far: carried through continue-as-new so event numbers stay unique. */
  get seq(): number {
    return this.seqNo;
  }

  private logFields() {
    const r = this.inst;
    return {
      rentalKey: this.ids.rentalKey,
      instanceId: r?.instanceId ?? null,
      machineId: r?.offer.machineId ?? null,
      gpu: r?.offer.gpuName ?? null,
      dphUsd: r?.offer.dphTotal ?? null,
    };
  }

  /** The operator's webhook, told only where the lifecycle has one (`input.notify`): no step otherwise. */
  private tell(event: Pick<NotifyEvent, 'kind' | 'reason' | 'failureType' | 'rateProofsPerHour' | 'costUsd'>) {
    if (!this.input.notify) return Promise.resolve();
    return notify({ workflowId: this.ids.workflowId, ...this.logFields(), at: new Date().toISOString(), ...event });
  }

  private event(stage: Stage, message: string, details?: Record<string, unknown>, at = new Date().toISOString()) {
    return this.later(this.store.recordEvent({ ...this.ids, seq: ++this.seqNo, stage, message, details, at }));
  }

  /** A stage change's event: in the UI's timeline as `recordEvent • stage → benchmark`. */
  private stageEvent(stage: Stage, details?: Record<string, unknown>, at = new Date().toISOString()) {
    return this.later(
      this.store.recordEvent({ ...this.ids, seq: ++this.seqNo, stage, message: `entered ${stage}`, details, at }),
    );
  }

  /** The stage in the status, search attribute and metric; its store event is `recordStage`'s. */
  markStage(stage: Stage, budgetSec?: number): void {
    this.st.stage = stage;
    this.st.stageDeadline = budgetSec ? new Date(Date.now() + budgetSec * 1000).toISOString() : null;
    upsertSearchAttributes([{ key: SA.stage, value: stage }, ...this.cost.attribute()]);
    fleetMetrics.stageEntered(stage);
    this.view.refresh();
  }

  /** Real seconds since the rent (the time to a verdict), on the hosts' clock converted. */
  private sinceRentSec(): number {
    return realMs(Date.now() - (this.rentedAtMs ?? Date.now()), this.input.clock) / 1000;
  }

  recordStage(stage: Stage, details?: Record<string, unknown>, at?: string): Promise<void> {
    return this.stageEvent(stage, details, at);
  }

  async enter(stage: Stage, budgetSec?: number, details?: Record<string, unknown>): Promise<void> {
    this.markStage(stage, budgetSec);
    lifecycleLog('stage', { stage, ...this.logFields() });
    await this.stageEvent(stage, details);
  }

  /** A lifecycle event in the current stage (a retry, a remedy, a sweep's find). */
  note(message: string, details?: Record<string, unknown>): Promise<void> {
    return this.event(this.status.stage, message, details);
  }

  /** The lifecycle's row, before renting (so even a lifecycle that never gets an instance has its kill recorded). */
  async offerTaken(label: string): Promise<void> {
    this.st.rentalNumber = await this.rentalNumber();
    this.view.refresh();
    upsertSearchAttributes([
      { key: SA.offerId, value: this.input.offerId },
      ...(this.st.rentalNumber === null ? [] : [{ key: SA.rentalNumber, value: String(this.st.rentalNumber) }]),
    ]);
    await this.recordInstance(label, null);
  }

  private recordInstance(label: string, inst: RentedInstance | null): Promise<void> {
    return this.later(
      this.store.recordInstance({
        ...this.ids,
        offerId: this.input.offerId,
        instanceId: inst?.instanceId ?? null,
        offer: inst?.offer ?? null,
        label,
        stage: 'provisioning',
        ...(inst?.bid ? { bidDph: inst.bid.priceDph } : {}),
        ...(inst && this.rentedAtMs !== null ? { rentedAt: new Date(this.rentedAtMs).toISOString() } : {}),
      }),
    );
  }

  async rentedInstance(label: string, inst: RentedInstance): Promise<void> {
    this.inst = inst;
    this.rentedAtMs = Date.now();
    this.view.rented(inst.offer, this.rentedAtMs);
    this.cost.rented(inst.offer.dphTotal, this.rentedAtMs);
    fleetMetrics.rented(inst.offer.gpuName);
    lifecycleLog('rent', { ...this.logFields(), offerId: this.input.offerId });
    this.st.instanceId = inst.instanceId;
    this.st.gpuName = inst.offer.gpuName;
    upsertSearchAttributes([
      { key: SA.vastInstanceId, value: inst.instanceId },
      { key: SA.gpuModel, value: inst.offer.gpuName },
      { key: SA.gpuCount, value: inst.offer.numGpus },
      { key: SA.machineId, value: String(inst.offer.machineId) },
      { key: SA.dollarsPerHour, value: inst.offer.dphTotal },
    ]);
    await this.recordInstance(label, inst);
  }

  /** The benchmark runs on a machine back from an expired mark: its whole batch, no early promote. */
  onProbation(probation: boolean): void {
    this.st.probation = probation;
  }

  /** A watched host's windowed rate (real proofs/h): the status shows the latest. */
  watchedRate(rate: number): void {
    this.st.rate = rate;
  }

  /** Vast could not be read since `since` (no evidence about the host), or null once it answers again. */
  vastUnreadable(unreadable: { since: string; lastError: string } | null): void {
    this.st.vastUnreadable = unreadable;
  }

  benchmarkStarted(requested: number): void {
    this.st.benchmark = { completed: 0, requested, elapsedMs: 0 };
  }

  async benchmarked(inst: RentedInstance, report: BenchmarkReport, rate: number): Promise<void> {
    this.st.benchmark = { completed: report.completed, requested: report.requested, elapsedMs: report.elapsedMs };
    this.st.rate = rate;
    upsertSearchAttributes([{ key: SA.benchRate, value: rate }]);
    fleetMetrics.benchRate(rate, inst.offer.gpuName);
    await this.later(this.store.recordBenchmark({ ...this.ids, offer: inst.offer, report, rate }));
  }

  /**
   * The billed price moved (Vast repriced the instance, or a raised bid took effect): the store's row and
   * DollarsPerHour follow it, with the cost counted up to the move, so the scaler's budget and the cost
   * report use what Vast bills now.
   */
  async priceMoved(inst: RentedInstance): Promise<void> {
    const l = this.cost.ledger();
    if (!l) return;
    upsertSearchAttributes([{ key: SA.dollarsPerHour, value: l.dph }, ...this.cost.attribute()]);
    lifecycleLog('price', { ...this.logFields(), dollarsPerHour: l.dph });
    await this.later(
      this.store.recordPriceMove({
        ...this.ids,
        dphTotal: l.dph,
        bidDph: inst.bid?.priceDph ?? null,
        countedAt: new Date(l.countedToMs).toISOString(),
        beforeVerdictUsd: l.beforeVerdictUsd,
        productionUsd: l.productionUsd,
      }),
    );
  }

  async promoted(
    inst: RentedInstance,
    rate: number,
    reason: string,
    evidence?: Record<string, unknown>,
  ): Promise<void> {
    const verdictCost = this.cost.promoted();
    await this.enter('promoted', undefined, { rate, ...evidence });
    upsertSearchAttributes([{ key: SA.outcome, value: 'promoted' }]);
    fleetMetrics.outcome('promoted', '', inst.offer.gpuName);
    fleetMetrics.timeToVerdictSeconds(this.sinceRentSec(), 'promoted');
    if (verdictCost) fleetMetrics.spent(verdictCost, 'promoted', inst.offer.gpuName);
    this.rentedAtMs = null;
    lifecycleLog('promote', { ...this.logFields(), rateProofsPerHour: rate });
    await this.later(
      this.store.recordOutcome({
        ...this.ids,
        outcome: 'promoted',
        failureType: null,
        reason,
        machineId: inst.offer.machineId,
        destroyed: false,
        ...(verdictCost ? { cost: { ...verdictCost, verdictAt: new Date().toISOString() } } : {}),
      }),
    );
    // Not awaited: the watch starts at once; the notification cannot hold it up.
    void this.tell({ kind: 'promote', rateProofsPerHour: rate, reason: `${rate} proofs/h` });
  }

  killing(failure: Classified): void {
    this.st.failureType = failure.type;
    this.st.cause = failure.message;
    upsertSearchAttributes([
      { key: SA.failureType, value: failure.type },
      { key: SA.outcome, value: 'killed' },
    ]);
  }

  recordKill(failure: Classified, destroyed: boolean) {
    return this.store.recordOutcome({
      ...this.ids,
      outcome: 'killed',
      failureType: failure.type,
      reason: failure.message,
      machineId: this.inst?.offer.machineId ?? null,
      destroyed,
      transientMarkSec: this.input.verdicts.transientMarkSec,
      ...(this.input.verdicts.operatorBar ? { operatorBar: true } : {}),
      ...this.cost.field(),
    });
  }

  async killed(failure: Classified, destroyed: boolean): Promise<void> {
    fleetMetrics.outcome('killed', failure.type, this.inst?.offer.gpuName ?? 'unknown');
    if (this.rentedAtMs !== null) fleetMetrics.timeToVerdictSeconds(this.sinceRentSec(), 'killed');
    const spent = this.cost.now();
    // A promoted host's cost of finding out was counted at its promotion.
    const verdictCounted = (this.cost.ledger()?.verdictAtMs ?? null) !== null;
    if (spent) fleetMetrics.spent(spent, 'killed', this.inst?.offer.gpuName ?? 'unknown', verdictCounted);
    lifecycleLog('kill', {
      ...this.logFields(),
      failureType: failure.type,
      cause: failure.message,
      costUsd: spent?.totalUsd ?? 0,
      cost: formatUsd(spent?.totalUsd ?? 0),
      destroyed,
    });
    await this.enter('killed', undefined, {
      failureType: failure.type,
      verdict: verdictFor(failure.type).verdict,
      destroyed,
    });
    // The run ends next: every record first (after the destroy, so an outage only delays the end).
    await this.recorded();
    // After the destroy and its record; awaited because the workflow ends next, bounded by its timeout.
    await this.tell({
      kind: 'kill',
      failureType: failure.type,
      costUsd: spent ? spent.totalUsd : null,
      reason: failure.message,
    });
  }

  /** Money may be leaking: count it, log it, tell the webhook (awaited: the workflow fails next). */
  async destroyFailed(instanceId: number, killReason: FailureType): Promise<void> {
    fleetMetrics.destroyFailed(killReason);
    lifecycleLog('kill', { ...this.logFields(), failureType: FT.DestroyFailed, killReason });
    await this.tell({
      kind: 'destroy_failed',
      failureType: killReason,
      reason: `destroy failed after retries; destroy instance ${instanceId} by hand`,
    });
    // The alert does not wait for Postgres; the run's end does, for its records.
    await this.recorded();
  }
}
