import {
  ActivityFailure,
  ApplicationFailure,
  isCancellation,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { BenchmarkInput, GpuHostActivities } from '../../activities/gpu-host/activities.js';
import type { FitnessInput } from '../../activities/gpu-host/fitness.js';
import { benchmarkOptions, hostOptions } from '../activity-options.js';
import {
  failureTypeOf,
  hostTimedOut,
  lostBeforeFirstHeartbeat,
  type Origin,
  originOf,
  tagOrigin,
  timeoutTypeOf,
} from '../classify.js';
import { FailureType } from '../domain/failures.js';
import { type Clock, realDuration } from '../domain/policy/clock.js';
import type { BenchInputPolicy } from '../domain/policy/fitness.js';
import type { LifecycleInput, LifecycleTimeouts } from '../domain/types.js';
import { gpuLabel, hostSummary } from '../ui/summaries.js';
import { summarized } from '../ui/summarized.js';
import type { Journal } from './journal.js';

/** Times a kept step is collected again after timing out at the server; then the timeout stands (HostLost). */
const MAX_STEP_RESUMES = 3;

/**
 * A host words a stall or a wait in seconds of its own clock; the lifecycle says it in real time, made
 * from the number it passed the step (`say`; null keeps the host's message), so a kill reads
 * "no progress for 33 min" against the simulators as in production.
 */
async function inRealTime<T>(
  step: Promise<T>,
  type: FailureType,
  say: (details: Record<string, unknown>) => string | null,
): Promise<T> {
  try {
    return await step;
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    if (!(cause instanceof ApplicationFailure) || cause.type !== type) throw err;
    const first: unknown = cause.details?.[0];
    const message = say(first !== null && typeof first === 'object' ? (first as Record<string, unknown>) : {});
    if (message === null) throw err;
    const details = cause.details ? [...cause.details] : [];
    throw tagOrigin(ApplicationFailure.create({ type, message, nonRetryable: true, details }), originOf(err));
  }
}

/**
 * The rented host's steps, each delivered on the host's own queue. `answered` turns true once the host
 * has completed a step (it connected): only then is it worth asking it for diagnostics on the kill path.
 */
export class HostSteps {
  answered: boolean;
  private steps = 0;
  /** The host's first step: waits for the host to connect and poll its queue. */
  private readonly firstContact: GpuHostActivities;
  private readonly daemonWork: GpuHostActivities;
  private readonly shortCall: GpuHostActivities;
  private readonly benchmarkBatch: GpuHostActivities;

  private readonly t: LifecycleTimeouts;
  private readonly clock: Clock;
  /** Daemon restarts left for the transport-error remedy, across both warmups. */
  private restartsLeft: number;
  /** Workflow time the running step timed out at the server (its heartbeats stopped reaching us); null while heard. */
  private unheardSinceMs: number | null = null;

  constructor(
    label: string,
    input: LifecycleInput,
    private readonly journal: Journal,
  ) {
    const t = input.timeouts;
    this.t = t;
    this.clock = input.clock;
    this.answered = input.resume !== undefined;
    this.restartsLeft = input.transportErrorRestarts;
    // Each call carries a summary for the UI: "benchmark 12 proofs ×3 on 2x A40".
    const onGpus = (activity: string, args: unknown[]) =>
      hostSummary(gpuLabel(journal.rented?.offer ?? null))(activity, args);
    const proxy = (o: Parameters<typeof proxyActivities>[0]) =>
      summarized(proxyActivities<GpuHostActivities>(o), onGpus);
    this.firstContact = proxy(hostOptions(label, t, 'firstContact'));
    this.daemonWork = proxy(hostOptions(label, t, 'daemonWork'));
    this.shortCall = proxy(hostOptions(label, t, 'shortCall'));
    this.benchmarkBatch = proxy(benchmarkOptions(label, t));
  }

  /** The gate's probes: the host's first step, so it also waits for the host to connect. */
  checkFitness(probes: FitnessInput) {
    return this.deliver(
      'checkFitness',
      (id) => this.firstContact.checkFitness({ ...probes, stepId: id }),
      'host-first',
    );
  }

  /** The benchmark's C1 input at C1_PATH: present, cached beside the parameters, or downloaded now. */
  ensureBenchInput(req: BenchInputPolicy) {
    const { url, sha256, stallSec } = req;
    return inRealTime(
      this.deliver('ensureBenchInput', (id) => this.daemonWork.ensureBenchInput({ url, sha256, stallSec, stepId: id })),
      FailureType.BenchInputFetchFailed,
      (d) =>
        d.stalled === true
          ? `C1 download stalled: no byte for ${realDuration(stallSec, this.clock)} after ${String(d.bytes)} bytes`
          : null,
    );
  }

  paramfetch() {
    const stallSec = this.t.paramfetchStallSec;
    return inRealTime(
      this.deliver('paramfetch', (id) => this.firstContact.paramfetch({ stallSec, stepId: id }), 'host-first'),
      FailureType.ParamfetchFailed,
      (d) => (d.stalled === true ? `paramfetch stalled: no progress for ${realDuration(stallSec, this.clock)}` : null),
    );
  }

  inspect() {
    return this.deliver('inspectHost', (id) => this.shortCall.inspectHost({ stepId: id }));
  }

  startDaemon(partitionWorkers: number) {
    const readySec = this.t.daemonReadySec;
    return inRealTime(
      this.deliver('startDaemon', (id) => this.daemonWork.startDaemon({ partitionWorkers, readySec, stepId: id })),
      FailureType.DaemonNeverReady,
      () => `cuzk-daemon did not answer GetStatus within ${realDuration(readySec, this.clock)}`,
    );
  }

  /**
   * A warmup proof on a daemon started with `partitionWorkers`, with the operating history's remedy for a
   * stream dropped on a fresh daemon: restart it and prove again (`transportErrorRestarts` times in all).
   */
  async warmupProof(step: 'warmup' | 'post_restart_warmup', partitionWorkers: number): Promise<void> {
    const proofDeadlineSec = this.t.proofDeadlineSec;
    for (;;) {
      try {
        await this.deliver(step, (id) => this.daemonWork.warmupProof({ step, proofDeadlineSec, stepId: id }));
        return;
      } catch (err) {
        if (failureTypeOf(err) !== FailureType.DaemonTransportError || this.restartsLeft <= 0) throw err;
        this.restartsLeft--;
        await this.journal.note('transport error: restarting daemon once');
        await this.startDaemon(partitionWorkers);
      }
    }
  }

  /**
   * Since when the running step has gone unheard: the server timed it out and the workflow is collecting
   * it by its step id. A deadline that passes meanwhile is not evidence (workflows/lifecycle/benchmark.ts).
   */
  unheardSince(): number | null {
    return this.unheardSinceMs;
  }

  runBenchmark(batch: BenchmarkInput) {
    return this.deliver('benchmark', (id) => this.benchmarkBatch.runBenchmark({ ...batch, stepId: id }));
  }

  startProduction(concurrency: number) {
    return this.deliver('startProduction', (id) => this.shortCall.startProduction({ concurrency, stepId: id }));
  }

  sampleDaemon() {
    return this.deliver('sampleDaemon', (id) => this.shortCall.sampleDaemon({ stepId: id }));
  }

  /** The daemon's log tail and the host's output, for the kill's record; undefined when the host cannot say. */
  async collectDiagnostics() {
    try {
      const d = await this.shortCall.collectDiagnostics();
      return { ...d, outputTail: d.paramfetchTail };
    } catch {
      return undefined;
    }
  }

  /**
   * Runs a host step. If it timed out without a single heartbeat, the server handed it out but the host
   * never ran it (seen at 1000 hosts: poll answers lost under server load) or the host died at once. A
   * quick probe on the host's queue tells which: a live host gets the step once more; for a dead one the
   * step's own timeout stands as the reason (HostLost). A step that timed out after starting (a Temporal
   * outage stops heartbeats and can swallow a completion) is collected from the host by its step id.
   * Each retry is a lifecycle event and in history. What the step throws is tagged with `origin`.
   */
  private async deliver<T>(step: string, call: (stepId: string) => Promise<T>, origin: Origin = 'host'): Promise<T> {
    // Each step carries an id the host keeps its work and result under (activities/gpu-host/step-keeper.ts).
    const stepId = `${workflowInfo().runId}/${++this.steps}/${step}`;
    let redelivered = false;
    this.unheardSinceMs = null;
    for (let resumes = 0; ; resumes++) {
      try {
        // Awaited here, not through a wrapper: the benchmark's race against its timer sees the same promise chain.
        const res = await call(stepId);
        this.answered = true;
        this.unheardSinceMs = null;
        return res;
      } catch (caught) {
        const err = tagOrigin(caught, origin);
        const lost: boolean = !redelivered && lostBeforeFirstHeartbeat(err);
        const resumable = !lost && resumes < MAX_STEP_RESUMES && hostTimedOut(err);
        if (!lost && !resumable) throw err;
        this.unheardSinceMs ??= Date.now();
        await this.probe(err);
        redelivered ||= lost;
        await this.journal.note(
          lost
            ? `${step} was handed to the host but never started; the host answers, so it runs once more`
            : `${step} timed out at the server but the host answers: collecting its result (${resumes + 1}/${MAX_STEP_RESUMES})`,
          lost ? { step } : { step, stepId, timeoutType: timeoutTypeOf(err) },
        );
      }
    }
  }

  /** Does the host answer at all? If not, the step's own failure `stepErr` stands. */
  private async probe(stepErr: unknown): Promise<void> {
    try {
      await this.shortCall.inspectHost();
    } catch (probeErr) {
      if (isCancellation(probeErr)) throw probeErr;
      throw stepErr;
    }
  }
}
