import path from 'node:path';
import { Context } from '@temporalio/activity';
import { FailureType, type HostDiagnostics } from '../../workflows/domain/failures.js';
import { earlyStopEvidence } from '../../workflows/domain/policy/early-stop.js';
import { type EarlyPromoteEvidence, earlyPromoteEvidence } from '../../workflows/domain/policy/early-promote.js';
import type { Confidence } from '../../workflows/domain/policy/student-t.js';
import type { FitnessMeasurement } from '../../workflows/domain/policy/fitness.js';
import type {
  BenchmarkProgress,
  BenchmarkReport,
  EarlyStopEvidence,
  ProofTiming,
} from '../../workflows/domain/types.js';
import { type BenchInputRequest, type BenchInputResult, ensureBenchInput } from './bench-input.js';
import { type C1Input, loadC1 } from './c1-input.js';
import { CuzkClient } from './cuzk-client.js';
import type { DaemonSupervisor } from './daemon.js';
import { classifyDaemonError, diagnostics, failure } from './errors.js';
import { type FitnessInput, type FitnessProbes, measureFitness } from './fitness.js';
import { startHeartbeatTicker } from './heartbeat-ticker.js';
import { readTail } from './log-tail.js';
import { runParamfetch } from './paramfetch.js';
import type { ProductionRunner } from './production.js';
import type { SpawnHostProcess } from './spawn.js';
import { benchmarkProgressReporter } from './progress-signal.js';
import { type StepContext, StepKeeper } from './step-keeper.js';

export interface GpuHostDeps {
  supervisor: DaemonSupervisor;
  production: ProductionRunner;
  cuzkAddress: string;
  paramfetchCommand: string[];
  /** How paramfetch is started (default: a child of this process). */
  spawn?: SpawnHostProcess;
  c1Path: string;
  minerId: number;
  workDir: string;
  /** The fitness gate's probes (nvidia-smi, df, dd, a sample URL) and the parameter cache they measure. */
  fitness: FitnessProbes;
}

/** PoRep 32 GiB (StackedDrg32GiBV1_1). */
const REGISTERED_PROOF_POREP_32G = 8;

/**
 * Activities that run on the rented machine itself, on its own task queue. They heartbeat, so the
 * workflow notices a vanished host within one heartbeat timeout and can cancel a running batch.
 */
export function createGpuHostActivities(deps: GpuHostDeps) {
  const { supervisor } = deps;
  let client: CuzkClient | null = null;
  let c1: C1Input | null = null;
  const cuzk = () => (client ??= new CuzkClient(deps.cuzkAddress));
  const paramfetchLog = path.join(deps.workDir, 'paramfetch.log');
  // Long steps run under the keeper, so a Temporal outage that loses an attempt does not lose the work.
  const steps = new StepKeeper();

  async function input(): Promise<C1Input> {
    return (c1 ??= await loadC1(deps.c1Path));
  }

  async function proveOnce(requestId: string, deadlineSec: number, index: number): Promise<ProofTiming> {
    const c = await input();
    const res = await cuzk().prove(
      {
        requestId,
        vanillaProof: c.bytes,
        sectorNumber: c.sectorNumber,
        sectorSize: c.sectorSize,
        minerId: deps.minerId,
        registeredProof: REGISTERED_PROOF_POREP_32G,
      },
      deadlineSec * 1000,
    );
    if (res.status !== 'COMPLETED') {
      throw failure(
        FailureType.ProofFailed,
        `proof ${requestId} ended ${res.status}: ${res.error_message}`,
        await diagnostics(supervisor),
        {
          status: res.status,
          errorMessage: res.error_message,
        },
      );
    }
    return { index, totalMs: res.total_ms, synthesisMs: res.synthesis_ms, gpuComputeMs: res.gpu_compute_ms };
  }

  /** Fresh id per attempt: the daemon uses it as the job id, and reusing a running one corrupts both. */
  function requestId(step: string, index: number): string {
    const info = Context.current().info;
    return `${info.workflowExecution?.workflowId ?? 'standalone'}/${step}/a${info.attempt}/${index}`;
  }

  /** (Re)starts the daemon and waits for a successful GetStatus, the only real readiness signal. */
  async function startDaemon(
    ctx: StepContext,
    input: { partitionWorkers: number; readySec: number },
  ): Promise<{ readyMs: number; gpus: number }> {
    const started = Date.now();
    // At once, not after the first wait: a step that never heartbeats reads as lost in delivery (see the workflow).
    ctx.heartbeat({ waitingMs: 0 });
    await supervisor.start(input.partitionWorkers);
    const deadline = started + input.readySec * 1000;
    let lastError = '';
    while (Date.now() < deadline) {
      ctx.heartbeat({ waitingMs: Date.now() - started });
      if (!supervisor.running) {
        throw await classifyDaemonError(new Error('daemon exited while starting'), supervisor, 'daemon start');
      }
      try {
        const status = await cuzk().getStatus(2000);
        return { readyMs: Date.now() - started, gpus: status.gpus.length };
      } catch (err) {
        lastError = err instanceof Error ? err.message : String(err);
      }
      if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
      await new Promise((r) => setTimeout(r, 250));
    }
    const diag = await diagnostics(supervisor, { grpcMessage: lastError });
    await supervisor.stop();
    throw failure(
      FailureType.DaemonNeverReady,
      `cuzk-daemon did not answer GetStatus within ${input.readySec} s`,
      diag,
    );
  }

  async function runBenchmark(
    ctx: StepContext,
    input: BenchmarkInput,
    reportProgress: (p: BenchmarkProgress) => void,
  ): Promise<BenchmarkReport> {
    const started = Date.now();
    const timings: ProofTiming[] = [];
    let next = 0;
    let failed: unknown = null;
    let gaveUp = false;
    let promoted: EarlyPromoteEvidence | null = null;
    /** Proofs in flight by index: when each started (ms into the batch), for the projected rate. */
    const inFlight = new Map<number, number>();
    const progress = () => ({ completed: timings.length, requested: input.count, elapsedMs: Date.now() - started });
    const stopTicker = startHeartbeatTicker(ctx, progress);
    const worker = async () => {
      while (next < input.count && failed === null && !gaveUp && !promoted && !ctx.cancellationSignal.aborted) {
        const index = next++;
        inFlight.set(index, Date.now() - started);
        try {
          timings.push(await proveOnce(requestId('bench', index), input.proofDeadlineSec, index));
          inFlight.delete(index);
          ctx.heartbeat(progress());
          reportProgress(progress());
          if (input.earlyStop && !gaveUp) {
            const evidence = earlyStopEvidence({
              completed: timings.length,
              requested: input.count,
              elapsedMs: Date.now() - started,
              fastestProofMs: Math.min(...timings.map((t) => t.totalMs)),
              fastestGpuMs: Math.min(...timings.map((t) => t.gpuComputeMs)),
              gpus: input.earlyStop.gpus ?? 0,
              concurrency: input.concurrency,
              minRate: input.earlyStop.minRate,
              minProofs: input.earlyStop.minProofs,
            });
            if (evidence) {
              gaveUp = true;
              stopEarly(evidence);
            }
          }
          if (input.earlyPromote && !gaveUp && !promoted) {
            promoted = earlyPromoteEvidence({
              totalsMs: timings.map((t) => t.totalMs),
              requested: input.count,
              elapsedMs: Date.now() - started,
              concurrency: input.concurrency,
              inFlightStartedMs: [...inFlight.values()],
              ...input.earlyPromote,
            });
            if (promoted) promoteEarly(promoted);
          }
        } catch (err) {
          if (!ctx.cancellationSignal.aborted) failed ??= err;
        }
      }
    };
    let stopEarly: (evidence: EarlyStopEvidence) => void = () => undefined;
    const stoppedByPolicy = new Promise<{ gaveUp: EarlyStopEvidence }>((resolve) => {
      stopEarly = (evidence) => resolve({ gaveUp: evidence });
    });
    let promoteEarly: (e: EarlyPromoteEvidence) => void = () => undefined;
    const promotedEarly = new Promise<{ promoted: EarlyPromoteEvidence }>((resolve) => {
      promoteEarly = (e) => resolve({ promoted: e });
    });
    const cancelled = new Promise<'cancelled'>((resolve) => {
      ctx.cancellationSignal.addEventListener('abort', () => resolve('cancelled'));
    });
    const workers = Promise.all(Array.from({ length: input.concurrency }, worker));
    try {
      const how = await Promise.race([workers, cancelled, stoppedByPolicy, promotedEarly]);
      if (typeof how === 'object' && 'promoted' in how) {
        // The daemon stays up for production; the proofs in flight finish there and are not waited for.
        return { ...report(timings, input, Date.now() - started), deadlineReached: false, promotedEarly: how.promoted };
      }
      if (typeof how === 'object' && 'gaveUp' in how) {
        // Proofs still in flight would only cost more: the daemon keeps proving after a dropped call.
        const elapsedMs = Date.now() - started;
        await supervisor.stop();
        // The evidence goes back with the report: the workflow phrases its verdict from it, never recomputes it.
        return { ...report(timings, input, elapsedMs), deadlineReached: false, gaveUp: how.gaveUp };
      }
      if (how === 'cancelled') {
        const elapsedMs = Date.now() - started;
        await supervisor.stop();
        // Only the workflow cancels a batch: its benchmark timer fired (or an operator's cancel, which it tells apart).
        return { ...report(timings, input, elapsedMs), deadlineReached: true };
      }
      if (failed !== null) throw await classifyDaemonError(failed, supervisor, 'benchmark', progress());
      return { ...report(timings, input, Date.now() - started), deadlineReached: false };
    } finally {
      stopTicker();
    }
  }

  return {
    /** The gate's measurements, right after the host connects (workflows/lifecycle/fitness-gate.ts judges them). */
    async checkFitness(input: FitnessInput & { stepId?: string }): Promise<FitnessMeasurement> {
      return steps.run(input.stepId, (ctx) => measureFitness({ spawn: deps.spawn, ...deps.fitness }, input, ctx));
    },

    /** Puts the benchmark's C1 input at C1_PATH (image, cache or download) before paramfetch. */
    async ensureBenchInput(input: BenchInputRequest & { stepId?: string }): Promise<BenchInputResult> {
      return steps.run(input.stepId, async (ctx) => {
        const res = await ensureBenchInput(deps.c1Path, deps.fitness.paramCacheDir, input, ctx);
        c1 = null;
        return res;
      });
    },

    async paramfetch(input: { stallSec: number; stepId?: string }): Promise<{ elapsedMs: number }> {
      return steps.run(input.stepId, async (ctx) => {
        const res = await runParamfetch(deps.paramfetchCommand, paramfetchLog, input.stallSec * 1000, deps.spawn, ctx);
        return { elapsedMs: res.elapsedMs };
      });
    },

    /** Also the workflow's probe of a host whose step timed out: that call has no step id and keeps nothing. */
    async inspectHost(input: { stepId?: string } = {}): Promise<{ pceCached: boolean }> {
      return steps.run(input.stepId, async () => ({ pceCached: await supervisor.pceCached() }));
    },

    /** (Re)starts the daemon and waits for a successful GetStatus, the only real readiness signal. */
    async startDaemon(input: {
      partitionWorkers: number;
      readySec: number;
      stepId?: string;
    }): Promise<{ readyMs: number; gpus: number }> {
      return steps.run(input.stepId, (ctx) => startDaemon(ctx, input));
    },

    async warmupProof(input: { step: string; proofDeadlineSec: number; stepId?: string }): Promise<ProofTiming> {
      return steps.run(input.stepId, async (ctx) => {
        const started = Date.now();
        const stopTicker = startHeartbeatTicker(ctx, () => ({ step: input.step, elapsedMs: Date.now() - started }));
        try {
          return await proveOnce(requestId(input.step, 0), input.proofDeadlineSec, 0);
        } catch (err) {
          throw await classifyDaemonError(err, supervisor, input.step);
        } finally {
          stopTicker();
        }
      });
    },

    /**
     * Proves `count` PoRep C2s, `concurrency` at a time. When the workflow's timer cancels it, the daemon
     * is stopped (CancelProof is a no-op in cuzk) and the partial report is returned for the record.
     */
    async runBenchmark(input: BenchmarkInput): Promise<BenchmarkReport> {
      const reportProgress = benchmarkProgressReporter(input.stepId);
      return steps.run(input.stepId, (ctx) => runBenchmark(ctx, input, reportProgress));
    },

    /** Daemon log and exit state, fetched before the instance is destroyed so the evidence survives. */
    async collectDiagnostics(): Promise<HostDiagnostics & { paramfetchTail: string }> {
      return { ...(await diagnostics(supervisor)), paramfetchTail: await readTail(paramfetchLog, 4000) };
    },

    async startProduction(input: { concurrency: number; stepId?: string }): Promise<{ started: boolean }> {
      return steps.run(input.stepId, () => startProduction(input));
    },

    /** One watch sample: the daemon's lifetime counters (the workflow turns deltas into a rate). */
    async sampleDaemon(input: { stepId?: string } = {}): Promise<{
      completed: number;
      failed: number;
      uptimeSec: number;
      at: number;
    }> {
      return steps.run(input.stepId, sampleDaemon);
    },
  };

  /** Hands the promoted host to the production prover (idempotent: a retry does not start a second). */
  async function startProduction(input: { concurrency: number }): Promise<{ started: boolean }> {
    if (!supervisor.running) {
      throw await classifyDaemonError(new Error('daemon is not running at promotion'), supervisor, 'start production');
    }
    return {
      started: deps.production.start({
        CUZK_ADDRESS: deps.cuzkAddress,
        C1_PATH: deps.c1Path,
        MINER_ID: String(deps.minerId),
        // The concurrency the benchmark proved this host sustains.
        PROOF_CONCURRENCY: String(input.concurrency),
      }),
    };
  }

  async function sampleDaemon(): Promise<{ completed: number; failed: number; uptimeSec: number; at: number }> {
    try {
      const s = await cuzk().getStatus(10_000);
      return {
        completed: s.total_proofs_completed,
        failed: s.total_proofs_failed,
        uptimeSec: s.uptime_seconds,
        at: Date.now(),
      };
    } catch (err) {
      throw await classifyDaemonError(err, supervisor, 'watch sample');
    }
  }
}

function report(timings: ProofTiming[], input: { count: number; concurrency: number }, elapsedMs: number) {
  return {
    requested: input.count,
    completed: timings.length,
    elapsedMs,
    concurrency: input.concurrency,
    timings: [...timings].sort((a, b) => a.index - b.index),
  };
}

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

export type GpuHostActivities = ReturnType<typeof createGpuHostActivities>;
