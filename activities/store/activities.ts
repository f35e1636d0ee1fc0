import { ApplicationFailure } from '@temporalio/activity';
import type pg from 'pg';
import { boundTail, type FailureType } from '../../workflows/domain/failures.js';
import { isRejectingSqlState, STORE_REJECTED } from '../../workflows/domain/store-errors.js';
import type { PerfHistory } from '../../workflows/domain/policy/offer-ranking.js';
import { type ReportBy, type SpendReport, spendReport } from '../../workflows/domain/policy/spend-report.js';
import type { BenchmarkReport, OfferFacts, Outcome } from '../../workflows/domain/types.js';
import { countsAgainstMachine, markFor } from '../../workflows/domain/policy/bad-machine-rule.js';
import { isFailureType } from '../../workflows/domain/failures.js';
import { FAILURE_VERDICTS, verdictFor, type Verdict } from '../../workflows/domain/policy/verdicts.js';
import * as q from './queries.js';
import { inTransaction } from './transaction.js';

export interface StoreActivityDeps {
  pool: pg.Pool;
}

export interface RecordOutcomeInput extends q.RentalIds {
  outcome: Outcome;
  failureType: FailureType | null;
  reason: string;
  machineId: number | null;
  destroyed: boolean;
  /** Seconds a first mark for a repeated transient cause lasts (default TRANSIENT_MARK_SEC, 24 h). */
  transientMarkSec?: number;
  /** The keep/kill bar was an operator's per-deploy override: a kill judged on it counts nothing. */
  operatorBar?: boolean;
  /** What the rental cost up to this outcome (absent from lifecycles older than cost keeping). */
  cost?: q.RentalCost;
}

/** The verdict a recorded outcome stands for (workflows/domain/policy/verdicts.ts). */
export function verdictOf(outcome: Outcome, failureType: string | null): Verdict {
  if (outcome === 'promoted') return 'promote';
  return failureType !== null && isFailureType(failureType) ? verdictFor(failureType).verdict : 'inconclusive';
}

/** Postgres writes; every one is idempotent because Temporal may run an activity more than once. */
export function createStoreActivities(deps: StoreActivityDeps) {
  return refusalsAreFinal(storeActivities(deps));
}

/**
 * A statement Postgres refused fails for good (StoreRejected); anything else (the server down, restarting,
 * unreachable) stays retryable, so the lifecycle waits for its database instead of failing.
 */
function refusalsAreFinal<T extends Record<string, (input: never) => Promise<unknown>>>(acts: T): T {
  const wrapped: Record<string, (input: never) => Promise<unknown>> = {};
  for (const [name, fn] of Object.entries(acts)) {
    wrapped[name] = async (input: never) => {
      try {
        return await fn(input);
      } catch (err) {
        const code = (err as { code?: unknown } | null)?.code;
        if (!isRejectingSqlState(code)) throw err;
        throw ApplicationFailure.create({
          type: STORE_REJECTED,
          message: `Postgres refused ${name}: ${err instanceof Error ? err.message : String(err)} (SQLSTATE ${String(code)})`,
          nonRetryable: true,
        });
      }
    };
  }
  return wrapped as T;
}

function storeActivities({ pool }: StoreActivityDeps) {
  return {
    async recordInstance(
      input: q.RentalIds & {
        offerId: number;
        instanceId: number | null;
        offer: OfferFacts | null;
        label: string;
        stage: string;
        /** The bid of an interruptible rental ($/h); absent for on-demand. */
        bidDph?: number | null;
        rentedAt?: string;
        timeScale?: number;
      },
    ): Promise<void> {
      await q.upsertInstance(pool, {
        rentalKey: input.rentalKey,
        workflowId: input.workflowId,
        offerId: input.offerId,
        instanceId: input.instanceId,
        machineId: input.offer?.machineId ?? null,
        hostId: input.offer?.hostId ?? null,
        gpuName: input.offer?.gpuName ?? null,
        numGpus: input.offer?.numGpus ?? null,
        cpuRamMb: input.offer?.cpuRamMb ?? null,
        dphTotal: input.offer?.dphTotal ?? null,
        label: input.label,
        stage: input.stage,
        bidDph: input.bidDph ?? null,
        rentedAt: input.rentedAt ?? null,
        ...(input.timeScale === undefined ? {} : { timeScale: input.timeScale }),
      });
    },

    async recordEvent(
      input: q.RentalIds & {
        seq: number;
        stage: string;
        message: string;
        details?: unknown;
        at: string;
      },
    ): Promise<void> {
      await q.insertEvent(pool, { ...input, details: input.details });
    },

    async recordBenchmark(
      input: q.RentalIds & {
        offer: OfferFacts;
        report: BenchmarkReport;
        rate: number;
      },
    ): Promise<void> {
      const { offer, report } = input;
      // One transaction: a retry after a write interrupted before host_perf moved must still move it.
      await inTransaction(pool, (db) =>
        q.upsertBenchmark(db, {
          rentalKey: input.rentalKey,
          workflowId: input.workflowId,
          machineId: offer.machineId,
          gpuName: offer.gpuName,
          numGpus: offer.numGpus,
          requested: report.requested,
          completed: report.completed,
          concurrency: report.concurrency,
          elapsedMs: report.elapsedMs,
          rate: input.rate,
          timings: report.timings,
          stoppedEarly: report.deadlineReached,
          dphTotal: offer.dphTotal,
        }),
      );
    },

    /**
     * Records kill or promote, counts the failure against the machine and applies the bad-machine rule,
     * in one transaction: the verdict is what says "already counted" to a retry, so it must never land
     * without the count (a retry would skip it) nor the count without it (a retry would count again).
     */
    async recordOutcome(input: RecordOutcomeInput): Promise<{ markedBad: boolean; passedProbation?: boolean }> {
      return inTransaction(pool, async (db) => {
        const verdict = verdictOf(input.outcome, input.failureType);
        const first = await q.finishInstance(db, { ...input, verdict });
        if (!first || input.machineId === null) return { markedBad: false };
        // A promotion of a machine on probation is its pass (early promote is off on probation: a full batch).
        if (input.outcome === 'promoted') {
          return { markedBad: false, passedProbation: await q.passProbation(db, input.machineId) };
        }
        const ctx = { operatorBar: input.operatorBar === true };
        if (input.failureType === null || !countsAgainstMachine(input.failureType, ctx)) return { markedBad: false };
        const count = await q.bumpMachineFailure(db, input.machineId, input.failureType);
        const decision = markFor(input.failureType, count, input.transientMarkSec, ctx);
        if (!decision.mark) return { markedBad: false };
        const why = `${input.failureType} x${count}: ${input.reason}`.slice(0, 500);
        await q.markBad(db, input.machineId, why, 'rule', decision.expiresInSec);
        return { markedBad: true };
      });
    },

    /** Machines the scaler lets rest: inconclusive too often within the window (bounded retries). */
    async restingMachines(input: { windowSec: number; retries: number }): Promise<number[]> {
      const retryTypes = Object.entries(FAILURE_VERDICTS)
        .filter(([, rule]) => rule.verdict === 'inconclusive' && rule.retry)
        .map(([type]) => type);
      return q.restingMachines(pool, { ...input, retryTypes });
    },

    /** The machine's standing before its benchmark: a machine back from an expired mark is on probation. */
    async machineStanding(input: { machineId: number }): Promise<{ standing: q.Standing; reason: string | null }> {
      const s = await q.machineStanding(pool, input.machineId);
      return { standing: s.standing, reason: s.reason };
    },

    /** A watched rental's price moved: what Vast bills from now on, and the cost counted up to the move. */
    async recordPriceMove(input: q.RentalIds & q.PriceMove): Promise<boolean> {
      const { rentalKey, workflowId, ...move } = input;
      return q.recordPriceMove(pool, { rentalKey, workflowId }, move);
    },

    async saveLogTail(input: q.RentalIds & { source: string; text: string }): Promise<void> {
      if (input.text.trim() === '') return;
      await q.insertLogTail(pool, input, input.source, boundTail(input.text, 64_000));
    },

    async listBadMachines(): Promise<number[]> {
      return q.listBadMachineIds(pool);
    },

    /** Per machine: its last benchmark; per GPU model: the mean rate per GPU over its machines. */
    async perfHistory(): Promise<PerfHistory> {
      const rows = await q.perfByMachine(pool);
      const byMachine: Record<string, number> = {};
      const sums: Record<string, { total: number; n: number }> = {};
      for (const r of rows) {
        byMachine[String(r.machineId)] = r.rate;
        const s = (sums[r.gpuName] ??= { total: 0, n: 0 });
        s.total += r.rate / Math.max(1, r.numGpus);
        s.n++;
      }
      const perGpuByModel = Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, v.total / v.n]));
      return { byMachine, perGpuByModel };
    },

    async workflowForLabel(label: string): Promise<string | null> {
      return q.workflowForLabel(pool, label);
    },

    /** By label: the instance's own rental, even when its workflow id has rented the offer again since. */
    async recordOrphanDestroyed(input: { label: string; workflowId: string; reason: string }): Promise<void> {
      await q.markOrphanDestroyed(pool, input.label, input.reason);
    },

    /** Read-only, for the operator CLI: marked machines with reason, source, ignored and when. */
    async machineRecords(input: { machineId?: number } = {}): Promise<q.MachineRecord[]> {
      return q.machineRecords(pool, input.machineId);
    },

    /** Read-only, for the operator CLI: a lifecycle's stored log tails. */
    async logTails(workflowId: string): Promise<q.LogTail[]> {
      return q.logTailsFor(pool, workflowId);
    },

    /** Read-only, for the operator CLI's `report`: the fleet's costs and proofs since a time, in real units. */
    async spendReport(input: { since: string; by: ReportBy | null }): Promise<SpendReport> {
      return spendReport(await q.spendRows(pool, input.since), Date.now(), input.since, input.by);
    },

    async rentedInstances(): Promise<q.FleetRow[]> {
      return q.rentedRows(pool);
    },

    /** Operator override of the bad-machine rule; false when the machine was never marked. */
    async markMachine(input: {
      machineId: number;
      action: 'bad' | 'ignore' | 'unignore';
      reason: string;
    }): Promise<boolean> {
      if (input.action === 'bad') {
        await q.markBad(pool, input.machineId, input.reason, 'operator');
        return true;
      }
      return q.setIgnored(pool, input.machineId, input.action === 'ignore');
    },
  };
}

export type StoreActivities = ReturnType<typeof createStoreActivities>;
