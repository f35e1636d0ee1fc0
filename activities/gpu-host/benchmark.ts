import { earlyStopEvidence, fastestOf } from '../../workflows/domain/policy/early-stop.js';
import { type EarlyPromoteEvidence, earlyPromoteEvidence } from '../../workflows/domain/policy/early-promote.js';
import type { Confidence } from '../../workflows/domain/policy/student-t.js';
import type {
  BenchmarkProgress,
  BenchmarkReport,
  EarlyStopEvidence,
  ProofTiming,
} from '../../workflows/domain/types.js';
import { classifyDaemonError } from './errors.js';
import { startHeartbeatTicker } from './heartbeat-ticker.js';
import type { GpuHostContext } from './host.js';
import { benchmarkProgressReporter } from './progress-signal.js';
import { proveOnce, requestId } from './prove.js';
import type { StepContext } from './step-keeper.js';

export interface BenchmarkInput {
  count: number;
  concurrency: number;
  proofDeadlineSec: number;
  /** When set, stop as soon as even the best case cannot reach minRate. */
  earlyStop?: { minRate: number; minProofs: number; gpus?: number };
  /** When set, stop and promote as soon as a pessimistic finish still reaches minRate (policy/early-promote.ts). */
  earlyPromote?: { minRate: number; confidence: Confidence; minProofs: number };
  /** The workflow's id of this step: a repeated call with it re-attaches to the batch or gets its report. */
  stepId?: string;
}

/** A policy's end of the batch before its count: the evidence goes back with the report. */
type Verdict = { gaveUp: EarlyStopEvidence } | { promoted: EarlyPromoteEvidence };

/** One batch in progress: what its proof workers share. */
interface Batch {
  readonly host: GpuHostContext;
  readonly ctx: StepContext;
  readonly input: BenchmarkInput;
  readonly started: number;
  readonly timings: ProofTiming[];
  /** Proofs in flight by index: when each started (ms into the batch), for the projected rate. */
  readonly inFlight: Map<number, number>;
  readonly reportProgress: (p: BenchmarkProgress) => void;
  next: number;
  failed: unknown;
  /** The first policy verdict; it ends the batch (later ones are not looked for). */
  verdict: Verdict | null;
  decide: (v: Verdict) => void;
}

/**
 * Proves `count` PoRep C2s, `concurrency` at a time. When the workflow's timer cancels it, the daemon
 * is stopped (CancelProof is a no-op in cuzk) and the partial report is returned for the record.
 */
export async function runBenchmark(host: GpuHostContext, input: BenchmarkInput): Promise<BenchmarkReport> {
  const reportProgress = benchmarkProgressReporter(input.stepId);
  return host.steps.run(input.stepId, (ctx) => runBatch(host, ctx, input, reportProgress));
}

async function runBatch(
  host: GpuHostContext,
  ctx: StepContext,
  input: BenchmarkInput,
  reportProgress: (p: BenchmarkProgress) => void,
): Promise<BenchmarkReport> {
  let resolveVerdict: (v: Verdict) => void = () => undefined;
  const decided = new Promise<Verdict>((resolve) => {
    resolveVerdict = resolve;
  });
  const batch: Batch = {
    host,
    ctx,
    input,
    reportProgress,
    started: Date.now(),
    timings: [],
    inFlight: new Map(),
    next: 0,
    failed: null,
    verdict: null,
    decide: (v) => {
      batch.verdict = v;
      resolveVerdict(v);
    },
  };
  const stopTicker = startHeartbeatTicker(ctx, () => progress(batch));
  const cancelled = new Promise<'cancelled'>((resolve) => {
    ctx.cancellationSignal.addEventListener('abort', () => resolve('cancelled'));
  });
  const workers = Promise.all(Array.from({ length: input.concurrency }, () => proveUntilDone(batch)));
  try {
    return await batchReport(batch, await Promise.race([workers, cancelled, decided]));
  } finally {
    stopTicker();
  }
}

function progress(b: Batch): BenchmarkProgress {
  return { completed: b.timings.length, requested: b.input.count, elapsedMs: Date.now() - b.started };
}

/** One of the batch's `concurrency` workers: takes the next proof until the count, a failure, a verdict or a cancel. */
async function proveUntilDone(b: Batch): Promise<void> {
  const { ctx, input } = b;
  while (b.next < input.count && b.failed === null && b.verdict === null && !ctx.cancellationSignal.aborted) {
    const index = b.next++;
    b.inFlight.set(index, Date.now() - b.started);
    try {
      b.timings.push(await proveOnce(b.host, requestId('bench', index), input.proofDeadlineSec, index));
      b.inFlight.delete(index);
      ctx.heartbeat(progress(b));
      b.reportProgress(progress(b));
      judge(b);
    } catch (err) {
      if (!ctx.cancellationSignal.aborted) b.failed ??= err;
    }
  }
}

/** After each proof: early stop first (the best case cannot reach the rate), then early promote. */
function judge(b: Batch): void {
  const { input, timings } = b;
  if (b.verdict !== null) return;
  if (input.earlyStop) {
    const evidence = earlyStopEvidence({
      completed: timings.length,
      requested: input.count,
      elapsedMs: Date.now() - b.started,
      ...fastestOf(timings),
      gpus: input.earlyStop.gpus ?? 0,
      concurrency: input.concurrency,
      minRate: input.earlyStop.minRate,
      minProofs: input.earlyStop.minProofs,
    });
    if (evidence) return b.decide({ gaveUp: evidence });
  }
  if (input.earlyPromote) {
    const promoted = earlyPromoteEvidence({
      totalsMs: timings.map((t) => t.totalMs),
      requested: input.count,
      elapsedMs: Date.now() - b.started,
      concurrency: input.concurrency,
      inFlightStartedMs: [...b.inFlight.values()],
      ...input.earlyPromote,
    });
    if (promoted) b.decide({ promoted });
  }
}

/** The report for however the batch ended: all proofs done, a failure, a verdict, or the workflow's cancel. */
async function batchReport(b: Batch, how: Verdict | 'cancelled' | void[]): Promise<BenchmarkReport> {
  const { supervisor } = b.host.deps;
  if (typeof how === 'object' && 'promoted' in how) {
    // The daemon stays up for production; the proofs in flight finish there and are not waited for.
    return { ...report(b, Date.now() - b.started), deadlineReached: false, promotedEarly: how.promoted };
  }
  if (typeof how === 'object' && 'gaveUp' in how) {
    // Proofs still in flight would only cost more: the daemon keeps proving after a dropped call.
    const elapsedMs = Date.now() - b.started;
    await supervisor.stop();
    // The evidence goes back with the report: the workflow phrases its verdict from it, never recomputes it.
    return { ...report(b, elapsedMs), deadlineReached: false, gaveUp: how.gaveUp };
  }
  if (how === 'cancelled') {
    const elapsedMs = Date.now() - b.started;
    await supervisor.stop();
    // Only the workflow cancels a batch: its benchmark timer fired (or an operator's cancel, which it tells apart).
    return { ...report(b, elapsedMs), deadlineReached: true };
  }
  if (b.failed !== null) throw await classifyDaemonError(b.failed, supervisor, 'benchmark', progress(b));
  return { ...report(b, Date.now() - b.started), deadlineReached: false };
}

function report(b: Batch, elapsedMs: number) {
  return {
    requested: b.input.count,
    completed: b.timings.length,
    elapsedMs,
    concurrency: b.input.concurrency,
    timings: [...b.timings].sort((a, c) => a.index - c.index),
  };
}
