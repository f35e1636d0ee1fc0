import { setCurrentDetails } from '@temporalio/workflow';
import type { HostDiagnostics } from '../domain/failures.js';
import type { BenchmarkProgressReport, LifecycleStatus, OfferFacts } from '../domain/types.js';
import type { CostFigures } from '../domain/policy/cost.js';
import { type Clock, realMs } from '../domain/policy/clock.js';
import { currentDetails } from './current-details.js';

/**
 * What the Temporal UI shows as a lifecycle's current details, kept in step with its status. The
 * lifecycle calls `refresh()` where its status changes; nothing here decides anything or touches history.
 * Durations arrive on the lifecycle's clock (policy/clock.ts) and are shown in real time.
 */
export function lifecycleView(status: LifecycleStatus, cost: () => CostFigures | null, clock: Clock) {
  let dph: number | null = null;
  let rentedAtMs: number | null = null;
  let rateWindowMs: number | null = null;
  let concurrency: number | null = null;
  let diagnostics: HostDiagnostics | undefined;

  function refresh(): void {
    const now = Date.now();
    const b = status.benchmark;
    setCurrentDetails(
      currentDetails(
        {
          stage: status.stage,
          benchmark: b ? { ...b, elapsedMs: realMs(b.elapsedMs, clock) } : null,
          stageDeadlineMs: status.stageDeadline ? now + realMs(Date.parse(status.stageDeadline) - now, clock) : null,
          rate: status.rate,
          rateWindowMs: rateWindowMs === null ? null : realMs(rateWindowMs, clock),
          costUsd: cost()?.totalUsd ?? null,
          waiting: status.waitingOn ?? null,
          vastUnreadableSince: status.vastUnreadable?.since ?? null,
          rentalNumber: status.rentalNumber,
        },
        now,
      ),
    );
  }

  return {
    refresh,
    rented(offer: OfferFacts, atMs: number): void {
      dph = offer.dphTotal;
      rentedAtMs = atMs;
    },
    planned(inFlight: number): void {
      concurrency = inFlight;
    },
    /** The host's evidence the kill path collected (daemon log tail, exit), for the kill's summary. */
    collected(diag: HostDiagnostics | undefined): void {
      diagnostics = diag;
    },
    /** A proof of the running batch finished (the host's benchmarkProgress signal). */
    progress(p: BenchmarkProgressReport): void {
      const b = status.benchmark;
      if (status.stage !== 'benchmark' || !b || p.completed < b.completed) return;
      status.benchmark = { completed: p.completed, requested: p.requested, elapsedMs: p.elapsedMs };
      refresh();
    },
    /** The promoted watch measured a rate over its window. */
    watched(windowMs: number): void {
      rateWindowMs = windowMs;
      refresh();
    },
    /** The kill's human summary replaces the live line for good. */
    killed(summary: string): void {
      setCurrentDetails(summary);
    },
    get dph() {
      return dph;
    },
    get rentedAtMs() {
      return rentedAtMs;
    },
    get concurrency() {
      return concurrency;
    },
    get diagnostics() {
      return diagnostics;
    },
  };
}
