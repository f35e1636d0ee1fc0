import { boundTail, type FailureType } from '../../workflows/domain/failures.js';
import { countsAgainstMachine, markFor } from '../../workflows/domain/policy/bad-machine-rule.js';
import { isFailureType } from '../../workflows/domain/failures.js';
import { verdictFor, type Verdict } from '../../workflows/domain/policy/verdicts.js';
import type { BenchmarkReport, OfferFacts, Outcome } from '../../workflows/domain/types.js';
import type { StoreDeps } from './deps.js';
import * as q from './queries.js';
import { inTransaction } from './transaction.js';

// A lifecycle's records of its rental: its row, events, benchmark, outcome, price moves and log tails.

export interface RecordInstanceInput extends q.RentalIds {
  offerId: number;
  instanceId: number | null;
  offer: OfferFacts | null;
  label: string;
  stage: string;
  /** The bid of an interruptible rental ($/h); absent for on-demand. */
  bidDph?: number | null;
  rentedAt?: string;
}

export async function recordInstance({ pool }: StoreDeps, input: RecordInstanceInput): Promise<void> {
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
  });
}

export interface RecordEventInput extends q.RentalIds {
  seq: number;
  stage: string;
  message: string;
  details?: unknown;
  at: string;
}

export async function recordEvent({ pool }: StoreDeps, input: RecordEventInput): Promise<void> {
  await q.insertEvent(pool, { ...input, details: input.details });
}

export interface RecordBenchmarkInput extends q.RentalIds {
  offer: OfferFacts;
  report: BenchmarkReport;
  rate: number;
}

export async function recordBenchmark({ pool }: StoreDeps, input: RecordBenchmarkInput): Promise<void> {
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
  /** What the rental cost up to this outcome, in real units (absent when nothing was rented). */
  cost?: q.RentalCost;
}

/** The verdict a recorded outcome stands for (workflows/domain/policy/verdicts.ts). */
export function verdictOf(outcome: Outcome, failureType: string | null): Verdict {
  if (outcome === 'promoted') return 'promote';
  return failureType !== null && isFailureType(failureType) ? verdictFor(failureType).verdict : 'inconclusive';
}

/**
 * Records kill or promote, counts the failure against the machine and applies the bad-machine rule,
 * in one transaction: the verdict is what says "already counted" to a retry, so it must never land
 * without the count (a retry would skip it) nor the count without it (a retry would count again).
 */
export function recordOutcome(
  { pool }: StoreDeps,
  input: RecordOutcomeInput,
): Promise<{ markedBad: boolean; passedProbation?: boolean }> {
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
}

/** A watched rental's price moved: what Vast bills from now on, and the cost counted up to the move. */
export function recordPriceMove({ pool }: StoreDeps, input: q.RentalIds & q.PriceMove): Promise<boolean> {
  const { rentalKey, workflowId, ...move } = input;
  return q.recordPriceMove(pool, { rentalKey, workflowId }, move);
}

export async function saveLogTail(
  { pool }: StoreDeps,
  input: q.RentalIds & { source: string; text: string },
): Promise<void> {
  if (input.text.trim() === '') return;
  await q.insertLogTail(pool, input, input.source, boundTail(input.text, 64_000));
}

/** By label: the instance's own rental, even when its workflow id has rented the offer again since. */
export async function recordOrphanDestroyed(
  { pool }: StoreDeps,
  input: { label: string; workflowId: string; reason: string },
): Promise<void> {
  await q.markOrphanDestroyed(pool, input.label, input.reason);
}
