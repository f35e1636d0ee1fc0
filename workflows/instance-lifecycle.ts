import {
  ContinueAsNew,
  continueAsNew,
  patched,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { GpuHostActivities } from '../activities/gpu-host/activities.js';
import type { StoreActivities } from '../activities/store/activities.js';
import type { VastActivities } from '../activities/vast/activities.js';
import {
  awaitRunningOptions,
  benchmarkOptions,
  destroyOptions,
  hostOptions,
  lifecycleStoreOptions,
  vastApiOptions,
} from './activity-options.js';
import {
  type Classified,
  classify,
  failureTypeOf,
  hostTimedOut,
  kill,
  lostBeforeFirstHeartbeat,
  type Origin,
  timeoutTypeOf,
} from './classify.js';
import { lifecycleStatusQuery, promoteOverrideSignal } from './definitions.js';
import { fleetMetrics, lifecycleLog } from './metrics.js';
import { notify } from './notify.js';
import { FailureType } from './failures.js';
import { planBenchmark } from './policy/concurrency.js';
import { withDefaults } from './policy/defaults.js';
import { gpuCeilingRate } from './policy/early-stop.js';
import { expectedBatchMs, judgeRate, proofsPerHour } from './policy/rate.js';
import { SA } from './search-attributes.js';
import { waitingStore } from './store-wait.js';
import { hostTaskQueue, instanceLabel, rentalKey } from './task-queues.js';
import type {
  BenchmarkReport,
  LifecycleRequest,
  LifecycleResult,
  LifecycleStatus,
  RentedInstance,
  Stage,
} from './types.js';

const vast = proxyActivities<VastActivities>(vastApiOptions);
/** patched() id of the promoted-instance watch, added after the first recorded histories. */
export const WATCH_PROMOTED_PATCH = 'watch-promoted-instances';
/** patched() id of restarting the daemon when an override follows an early stop. */
export const OVERRIDE_AFTER_EARLY_STOP_PATCH = 'restart-daemon-after-overridden-early-stop';
/** patched() id of running a host step once more when the host never started it (its dispatch was lost). */
export const REDELIVER_LOST_STEP_PATCH = 'redeliver-host-step-lost-before-start';
/** patched() id of keying a lifecycle's records, label and host queue by its rental, not its workflow id. */
export const RENTAL_KEY_PATCH = 'rental-key-from-first-run';
/** patched() id of destroying whatever carries the lifecycle's label on the kill path (a create whose answer was lost). */
export const DESTROY_LABELLED_PATCH = 'destroy-labelled-instances-on-kill';
/** patched() id of host steps kept on the host by step id and collected after a timeout while the host answers. */
export const RESUME_HOST_STEP_PATCH = 'resume-host-step-after-timeout';
/** Times a kept step is collected again after timing out at the server; then the timeout stands (HostLost). */
const MAX_STEP_RESUMES = 3;
/** patched() id of destroying a killed instance before any store write of the kill path. */
export const DESTROY_BEFORE_STORE_PATCH = 'destroy-before-store-writes';
const cleanupVast = proxyActivities<VastActivities>(destroyOptions);

/**
 * One rented GPU instance, from renting the offer to promotion or destruction. Reads like the runbook:
 * rent -> running -> paramfetch -> warmup -> restart -> post-restart warmup -> timed benchmark -> verdict.
 */
export async function instanceLifecycle(request: LifecycleRequest): Promise<LifecycleResult> {
  const input = withDefaults(request);
  const t = input.timeouts;
  const { workflowId, firstExecutionRunId } = workflowInfo();
  // One rental, one key (README, "One identity per rental"); runs from before it keep the workflow id.
  const rental =
    input.resume?.rentalKey ??
    (!input.resume && patched(RENTAL_KEY_PATCH) ? rentalKey(workflowId, firstExecutionRunId) : workflowId);
  const ids = { rentalKey: rental, workflowId };
  const label = instanceLabel(rental);
  const status: LifecycleStatus = {
    stage: 'provisioning',
    offerId: input.offerId,
    rentalKey: rental,
    instanceId: null,
    gpuName: null,
    benchmark: null,
    rate: null,
    startedAt: new Date().toISOString(),
    stageDeadline: null,
    failureType: null,
    waitingOn: null,
  };
  setHandler(lifecycleStatusQuery, () => status);
  // Store writes are fast and local to the control worker: local activities keep them out of the event count.
  // A Postgres outage makes them wait (status.waitingOn says so), never fail the lifecycle.
  const store = waitingStore(
    proxyLocalActivities<StoreActivities>(lifecycleStoreOptions(t, 'first')),
    proxyLocalActivities<StoreActivities>(lifecycleStoreOptions(t, 'again')),
    (wait) => {
      status.waitingOn = wait;
      setCurrentDetails(
        wait
          ? `waiting on the store since ${wait.since} (${wait.write}, ${wait.attempts} rounds): ${wait.lastError}`
          : '',
      );
    },
  );
  const override: { promote: { operator: string; reason: string } | null } = { promote: null };
  setHandler(promoteOverrideSignal, (o) => {
    override.promote = o;
  });
  let seq = 0;
  let rented: RentedInstance | null = null;
  let origin: Origin = 'workflow';
  let hostConnected = false;
  /** Workflow time of the rent, until the verdict: the time to verdict's start. */
  let rentedAtMs: number | null = null;
  const logFields = () => ({
    rentalKey: rental,
    instanceId: rented?.instanceId ?? null,
    machineId: rented?.offer.machineId ?? null,
    gpu: rented?.offer.gpuName ?? null,
    dphUsd: rented?.offer.dphTotal ?? null,
  });
  const notifyFields = () => ({ workflowId, ...logFields(), at: new Date().toISOString() });
  let hostSteps = 0;

  async function enter(stage: Stage, budgetSec?: number, details?: Record<string, unknown>): Promise<void> {
    status.stage = stage;
    status.stageDeadline = budgetSec ? new Date(Date.now() + budgetSec * 1000).toISOString() : null;
    upsertSearchAttributes([{ key: SA.stage, value: stage }]);
    fleetMetrics.stageEntered(stage);
    lifecycleLog('stage', { stage, ...logFields() });
    await store.recordEvent({
      ...ids,
      seq: ++seq,
      stage,
      message: `entered ${stage}`,
      details,
      at: new Date().toISOString(),
    });
  }

  const host = {
    first: proxyActivities<GpuHostActivities>(hostOptions(label, t, 'first')),
    step: proxyActivities<GpuHostActivities>(hostOptions(label, t, 'step')),
    quick: proxyActivities<GpuHostActivities>(hostOptions(label, t, 'quick')),
    bench: proxyActivities<GpuHostActivities>(benchmarkOptions(label, t)),
  };

  /**
   * Runs a host step. If it timed out without a single heartbeat, the server handed it out but the host
   * never ran it (seen at 1000 hosts: poll answers lost under server load) or the host died at once. A
   * quick probe on the host's queue tells which: a live host gets the step once more; for a dead one the
   * step's own timeout stands as the reason (HostLost). Each retry is a lifecycle event and in history.
   */
  async function onHost<T>(step: string, call: (stepId?: string) => Promise<T>): Promise<T> {
    // Each step carries an id the host keeps its work and result under (activities/gpu-host/step-keeper.ts).
    const stepId = patched(RESUME_HOST_STEP_PATCH) ? `${workflowInfo().runId}/${++hostSteps}/${step}` : undefined;
    let redelivered = false;
    for (let resumes = 0; ; resumes++) {
      try {
        return await call(stepId);
      } catch (err) {
        const lost: boolean = !redelivered && lostBeforeFirstHeartbeat(err) && patched(REDELIVER_LOST_STEP_PATCH);
        // A Temporal outage stops heartbeats and can swallow a completion: the server times the step out
        // although the host did its work. With a step id the host still holds it: collect, not HostLost.
        const resumable = !lost && stepId !== undefined && resumes < MAX_STEP_RESUMES && hostTimedOut(err);
        if (!lost && !resumable) throw err;
        try {
          await host.quick.inspectHost();
        } catch (probeErr) {
          if (isCancellation(probeErr)) throw probeErr;
          throw err;
        }
        redelivered ||= lost;
        await store.recordEvent({
          ...ids,
          seq: ++seq,
          stage: status.stage,
          message: lost
            ? `${step} was handed to the host but never started; the host answers, so it runs once more`
            : `${step} timed out at the server but the host answers: collecting its result (${resumes + 1}/${MAX_STEP_RESUMES})`,
          details: lost ? { step } : { step, stepId, timeoutType: timeoutTypeOf(err) },
          at: new Date().toISOString(),
        });
        // The redelivered step of a history recorded before step ids ended here, whatever its outcome.
        if (lost && stepId === undefined) return await call(stepId);
      }
    }
  }

  try {
    if (input.resume) {
      // A watched promoted instance continuing as new: pick up where the last run left off.
      rented = input.resume.rented;
      seq = input.resume.seq;
      status.instanceId = rented.instanceId;
      status.gpuName = rented.offer.gpuName;
      status.rate = input.resume.benchRate;
      status.stage = 'promoted';
      hostConnected = true;
      origin = 'host';
    } else {
      upsertSearchAttributes([{ key: SA.offerId, value: input.offerId }]);
      // The row exists before renting, so even a lifecycle that never gets an instance has its kill recorded.
      await store.recordInstance({
        ...ids,
        offerId: input.offerId,
        instanceId: null,
        offer: null,
        label,
        stage: 'provisioning',
      });
      await enter('provisioning');
      origin = 'vast';
      rented = await vast.rentOffer({
        offerId: input.offerId,
        label,
        image: input.image,
        diskGb: input.diskGb,
        hostTaskQueue: hostTaskQueue(label),
      });
      const offer = rented.offer;
      rentedAtMs = Date.now();
      fleetMetrics.rented(offer.gpuName);
      lifecycleLog('rent', { ...logFields(), offerId: input.offerId });
      status.instanceId = rented.instanceId;
      status.gpuName = offer.gpuName;
      upsertSearchAttributes([
        { key: SA.vastInstanceId, value: rented.instanceId },
        { key: SA.gpuModel, value: offer.gpuName },
        { key: SA.gpuCount, value: offer.numGpus },
        { key: SA.machineId, value: String(offer.machineId) },
        { key: SA.dollarsPerHour, value: offer.dphTotal },
      ]);
      await store.recordInstance({
        ...ids,
        offerId: input.offerId,
        instanceId: rented.instanceId,
        offer,
        label,
        stage: 'provisioning',
      });

      await enter('waiting_running', t.waitRunningSec);
      await proxyActivities<VastActivities>(awaitRunningOptions(t)).awaitRunning({
        instanceId: rented.instanceId,
        deadlineMs: Date.now() + t.waitRunningSec * 1000,
      });

      await enter('paramfetch', t.paramfetchSec);
      origin = 'host-first';
      await onHost('paramfetch', (stepId) =>
        host.first.paramfetch({ stallSec: t.paramfetchStallSec, ...(stepId ? { stepId } : {}) }),
      );
      hostConnected = true;
      origin = 'host';

      const plan = planBenchmark(offer.numGpus, offer.cpuRamMb, input.concurrency);
      const { pceCached } = await onHost('inspectHost', (stepId) => host.quick.inspectHost(stepId ? { stepId } : {}));
      // Making the PCE cache with many partition workers OOM-killed low-RAM hosts: warm up with few.
      const warmupWorkers = pceCached ? plan.partitionWorkers : plan.warmupPartitionWorkers;
      let restartsLeft = input.transportErrorRestarts;
      const startDaemon = (partitionWorkers: number) =>
        onHost('startDaemon', (stepId) =>
          host.step.startDaemon({ partitionWorkers, readySec: t.daemonReadySec, ...(stepId ? { stepId } : {}) }),
        );

      /** The seeds' remedy for a dropped stream on a fresh daemon: restart it once and prove again. */
      async function proveWithRemedy(step: 'warmup' | 'post_restart_warmup', workers: number): Promise<void> {
        for (;;) {
          try {
            await onHost(step, (stepId) =>
              host.step.warmupProof({ step, proofDeadlineSec: t.proofDeadlineSec, ...(stepId ? { stepId } : {}) }),
            );
            return;
          } catch (err) {
            if (failureTypeOf(err) !== FailureType.DaemonTransportError || restartsLeft <= 0) throw err;
            restartsLeft--;
            await store.recordEvent({
              ...ids,
              seq: ++seq,
              stage: step,
              message: 'transport error: restarting daemon once',
              at: new Date().toISOString(),
            });
            await startDaemon(workers);
          }
        }
      }

      await enter('warmup', t.daemonReadySec + t.proofDeadlineSec, { partitionWorkers: warmupWorkers, pceCached });
      await startDaemon(warmupWorkers);
      await proveWithRemedy('warmup', warmupWorkers);

      if (warmupWorkers !== plan.partitionWorkers) {
        await enter('restart', t.daemonReadySec, { partitionWorkers: plan.partitionWorkers });
        await startDaemon(plan.partitionWorkers);
        // The first proof after a restart is slow (kernel compile, PCE re-extract): keep it out of the timed batch.
        await enter('post_restart_warmup', t.proofDeadlineSec);
        await proveWithRemedy('post_restart_warmup', plan.partitionWorkers);
      }

      await enter('benchmark', t.benchmarkSec, { proofs: input.benchmarkProofs, concurrency: plan.concurrency });
      status.benchmark = { completed: 0, requested: input.benchmarkProofs, elapsedMs: 0 };
      const report = await benchmarkAgainstTimer(
        (batch) =>
          onHost('benchmark', (stepId) => host.bench.runBenchmark({ ...batch, ...(stepId ? { stepId } : {}) })),
        {
          count: input.benchmarkProofs,
          concurrency: plan.concurrency,
          proofDeadlineSec: t.proofDeadlineSec,
          // An operator who already chose to keep this host wants the full batch measured, not an early stop.
          ...(input.earlyStopAfterProofs > 0 && !override.promote
            ? {
                // Judge only after a full round: the first round's latencies include queueing behind
                // its own siblings (the bench measured a healthy 2x A40 at 6-way killed otherwise).
                earlyStop: {
                  minRate: input.minRate,
                  minProofs: Math.max(input.earlyStopAfterProofs, plan.concurrency + 1),
                  gpus: offer.numGpus,
                },
              }
            : {}),
        },
        t.benchmarkSec,
      );
      // An operator's cancel also stops the batch, which then returns normally: never promote after it.
      if (CancellationScope.current().consideredCancelled) throw new CancelledFailure('cancelled during benchmark');
      const rate = proofsPerHour(report.completed, report.elapsedMs);
      status.benchmark = { completed: report.completed, requested: report.requested, elapsedMs: report.elapsedMs };
      status.rate = rate;
      upsertSearchAttributes([{ key: SA.benchRate, value: rate }]);
      fleetMetrics.benchRate(rate, offer.gpuName);
      await store.recordBenchmark({ ...ids, offer, report, rate });

      await enter('evaluating');
      if (report.stoppedEarly) {
        throw kill(
          FailureType.BenchmarkTimeout,
          `benchmark did not finish within ${t.benchmarkSec} s (${report.completed}/${report.requested} proofs)`,
          {
            completed: report.completed,
            requested: report.requested,
            elapsedMs: report.elapsedMs,
            expectedMs: expectedBatchMs(report.requested, input.minRate),
            rate,
          },
        );
      }
      if (report.earlyStopped && !override.promote) {
        const ceiling = gpuCeilingRate(Math.min(...report.timings.map((x) => x.gpuComputeMs)), offer.numGpus);
        const why =
          ceiling !== null && ceiling < input.minRate
            ? `its ${offer.numGpus} GPU(s) cannot exceed ${Math.round(ceiling * 10) / 10} proofs/h`
            : 'even the best pace seen';
        throw kill(
          FailureType.BenchRateBelowMin,
          `stopped early after ${report.completed}/${report.requested} proofs: ${why} cannot reach ${input.minRate} proofs/h`,
          {
            rate,
            minRate: input.minRate,
            earlyStop: true,
            gpuCeilingRate: ceiling,
            timings: report.timings,
            elapsedMs: report.elapsedMs,
          },
        );
      }
      // The override arrived after the batch stopped early, which also stopped the daemon: prove again first.
      if (report.earlyStopped && override.promote && patched(OVERRIDE_AFTER_EARLY_STOP_PATCH)) {
        await startDaemon(plan.partitionWorkers);
      }
      const verdict = judgeRate(rate, input.minRate);
      if (!verdict.keep && !override.promote) {
        throw kill(FailureType.BenchRateBelowMin, `${rate} proofs/h is below the minimum of ${input.minRate}`, {
          rate,
          minRate: input.minRate,
          timings: report.timings,
          elapsedMs: report.elapsedMs,
        });
      }

      await enter('promoted', undefined, { rate });
      upsertSearchAttributes([{ key: SA.outcome, value: 'promoted' }]);
      fleetMetrics.outcome('promoted', '', offer.gpuName);
      fleetMetrics.timeToVerdictSeconds((Date.now() - (rentedAtMs ?? Date.now())) / 1000, 'promoted');
      rentedAtMs = null;
      lifecycleLog('promote', { ...logFields(), rateProofsPerHour: rate });
      await store.recordOutcome({
        ...ids,
        outcome: 'promoted',
        failureType: null,
        reason: override.promote
          ? `operator override by ${override.promote.operator}: ${override.promote.reason}`
          : `${rate} proofs/h`,
        machineId: offer.machineId,
        destroyed: false,
      });
      // Not awaited: the watch starts at once; the notification cannot hold it up.
      void notify({ kind: 'promote', ...notifyFields(), rateProofsPerHour: rate, reason: `${rate} proofs/h` });
    }
    // Histories recorded before promoted instances were watched end here; they must replay unchanged.
    if (!patched(WATCH_PROMOTED_PATCH)) return result('promoted', null, `${status.rate} proofs/h >= ${input.minRate}`);
    return await watchPromoted(rented);
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    const failure = classify(err, origin);
    const failedStage = status.stage;
    status.failureType = failure.type;
    // Cleanup runs even when the workflow itself was cancelled: a rented instance bills until destroyed.
    await CancellationScope.nonCancellable(() => killInstance(failure));
    if (isCancellation(err)) throw err;
    throw ApplicationFailure.create({
      type: failure.type,
      message: `${failure.message} (during ${failedStage})`,
      nonRetryable: true,
      details: [{ stage: failedStage, ...failure.details }],
    });
  }

  /**
   * Keeps a promoted instance honest: samples the daemon's counters on a cadence and kills it when its
   * rate stays under the floor, when it stops answering, or when its price rises above the budget.
   * Continues as new every `samplesPerRun` samples so history stays small.
   */
  async function watchPromoted(inst: RentedInstance): Promise<never> {
    const w = input.watch;
    const floor = w.floorRate ?? Math.round(input.minRate * 0.8 * 100) / 100;
    // The baseline is the price Vast bills this instance (storage for our disk included), read after renting.
    const maxDph = w.maxDph ?? Math.round(inst.offer.dphTotal * 1.2 * 1000) / 1000;
    let points = input.resume?.points ?? [];
    let lowSamples = input.resume?.lowSamples ?? 0;
    let vastUnreadableSince = input.resume?.vastUnreadableSince ?? null;
    const plan = planBenchmark(inst.offer.numGpus, inst.offer.cpuRamMb, input.concurrency);
    if (!input.resume)
      await onHost('startProduction', (stepId) =>
        host.quick.startProduction({ concurrency: plan.concurrency, ...(stepId ? { stepId } : {}) }),
      );
    for (let samples = 0; ; samples++) {
      if (samples >= w.samplesPerRun || workflowInfo().continueAsNewSuggested) {
        await continueAsNew<typeof instanceLifecycle>({
          ...request,
          resume: {
            rentalKey: rental,
            rented: inst,
            seq,
            benchRate: status.rate,
            points,
            lowSamples,
            vastUnreadableSince,
          },
        });
      }
      await sleep(w.intervalSec * 1000, { summary: 'watch interval' });
      const [sample, state] = await Promise.all([
        onHost('sampleDaemon', (stepId) => host.quick.sampleDaemon(stepId ? { stepId } : {})),
        vast.instanceState(inst.instanceId),
      ]);
      // Our failure to read Vast is no evidence about the host: wait it out (bounded), shown in the status.
      if (state.unreadable !== undefined) {
        vastUnreadableSince ??= Date.now();
        status.vastUnreadable = { since: new Date(vastUnreadableSince).toISOString(), lastError: state.unreadable };
        const outSec = Math.round((Date.now() - vastUnreadableSince) / 1000);
        if (outSec > w.vastPatienceSec) {
          throw kill(
            FailureType.VastApiError,
            `Vast could not be read for ${outSec} s (patience ${w.vastPatienceSec} s): the price of instance ${inst.instanceId} is unknown`,
            { unreadableSec: outSec, vastPatienceSec: w.vastPatienceSec, lastError: state.unreadable },
          );
        }
      } else {
        vastUnreadableSince = null;
        status.vastUnreadable = null;
      }
      if (state.unreadable === undefined && state.status !== 'running') {
        throw kill(FailureType.HostLost, `instance is ${state.status ?? 'gone'} at Vast`, {
          actualStatus: state.status,
        });
      }
      if (state.unreadable === undefined && state.dph > maxDph) {
        throw kill(
          FailureType.PriceAboveBudget,
          `price rose to $${state.dph}/h, above the budget of $${maxDph}/h (billed $${inst.offer.dphTotal}/h when rented)`,
          {
            dph: state.dph,
            maxDph,
            rentedAt: inst.offer.dphTotal,
          },
        );
      }
      // A counter that went backwards means the daemon restarted: start a new window.
      const lastPoint = points[points.length - 1];
      if (lastPoint && sample.completed < lastPoint.completed) points = [];
      points = [...points, { completed: sample.completed, at: sample.at }].slice(-(w.windowSamples + 1));
      const first = points[0];
      if (points.length <= w.windowSamples || !first) continue;
      const rate = proofsPerHour(sample.completed - first.completed, sample.at - first.at);
      status.rate = rate;
      lowSamples = rate < floor ? lowSamples + 1 : 0;
      if (lowSamples >= w.degradedSamples) {
        throw kill(
          FailureType.RateDegraded,
          `${rate} proofs/h for ${lowSamples} samples, under the floor of ${floor}`,
          {
            rate,
            floorRate: floor,
            samples: lowSamples,
            windowSec: w.windowSamples * w.intervalSec,
          },
        );
      }
    }
  }

  async function killInstance(failure: Classified): Promise<void> {
    upsertSearchAttributes([
      { key: SA.failureType, value: failure.type },
      { key: SA.outcome, value: 'killed' },
    ]);
    if (patched(DESTROY_BEFORE_STORE_PATCH)) return await destroyThenRecord(failure);
    await enter('killing', undefined, { failureType: failure.type, message: failure.message });
    const diag =
      failure.diagnostics ?? (hostConnected && failure.type !== FailureType.HostLost ? await tryCollect() : undefined);
    if (diag?.daemonLogTail) await store.saveLogTail({ ...ids, source: 'cuzk-daemon', text: diag.daemonLogTail });
    if (diag?.outputTail) await store.saveLogTail({ ...ids, source: 'output', text: diag.outputTail });
    let destroyed = false;
    if (rented) {
      try {
        await cleanupVast.destroyInstance(rented.instanceId);
        destroyed = true;
      } catch (destroyErr) {
        await store.recordOutcome({
          ...ids,
          outcome: 'killed',
          failureType: failure.type,
          reason: failure.message,
          machineId: rented.offer.machineId,
          destroyed: false,
        });
        return await destroyFailed(rented.instanceId, failure, destroyErr);
      }
    }
    // A create whose answer was lost (or whose request reached Vast late) leaves an instance under our label.
    if (patched(DESTROY_LABELLED_PATCH)) destroyed = (await destroyLabelled()) || destroyed;
    await store.recordOutcome({
      ...ids,
      outcome: 'killed',
      failureType: failure.type,
      reason: failure.message,
      machineId: rented?.offer.machineId ?? null,
      destroyed,
    });
    fleetMetrics.outcome('killed', failure.type, rented?.offer.gpuName ?? 'unknown');
    if (rentedAtMs !== null) fleetMetrics.timeToVerdictSeconds((Date.now() - rentedAtMs) / 1000, 'killed');
    lifecycleLog('kill', { ...logFields(), failureType: failure.type, destroyed });
    await enter('killed', undefined, { failureType: failure.type, destroyed });
    // After the destroy and its record; awaited because the workflow ends next, bounded by its timeout.
    await notify({ kind: 'kill', ...notifyFields(), failureType: failure.type, reason: failure.message });
  }

  /** Destroys every instance carrying this lifecycle's label; true when it found one. Never hides the kill's cause. */
  async function destroyLabelled(): Promise<boolean> {
    try {
      const { destroyed } = await cleanupVast.destroyLabelled(label);
      if (destroyed.length === 0) return false;
      await store.recordEvent({
        ...ids,
        seq: ++seq,
        stage: status.stage,
        message: `destroyed instance(s) ${destroyed.join(', ')} found under this lifecycle's label`,
        details: { destroyed, label },
        at: new Date().toISOString(),
      });
      return true;
    } catch (err) {
      await store.recordEvent({
        ...ids,
        seq: ++seq,
        stage: status.stage,
        message: `could not check Vast for instances labelled ${label}; the orphan reconciler will: ${err instanceof Error ? err.message : String(err)}`,
        details: { label },
        at: new Date().toISOString(),
      });
      return false;
    }
  }

  /**
   * The kill path: evidence from the host, then the destroy, then the records. No store write comes
   * before the destroy, so a Postgres outage (the writes wait it out) cannot keep an instance billing.
   */
  async function destroyThenRecord(failure: Classified): Promise<void> {
    status.stage = 'killing';
    status.stageDeadline = null;
    upsertSearchAttributes([{ key: SA.stage, value: 'killing' }]);
    fleetMetrics.stageEntered('killing');
    const killingAt = new Date().toISOString();
    const diag =
      failure.diagnostics ?? (hostConnected && failure.type !== FailureType.HostLost ? await tryCollect() : undefined);
    let destroyed = false;
    let destroyErr: unknown = null;
    if (rented) {
      try {
        await cleanupVast.destroyInstance(rented.instanceId);
        destroyed = true;
      } catch (err) {
        destroyErr = err;
      }
    }
    const rentedDestroyed = destroyed;
    // A create whose answer was lost (or whose request reached Vast late) leaves an instance under our label.
    if (patched(DESTROY_LABELLED_PATCH)) destroyed = (await destroyLabelled()) || destroyed;
    await store.recordEvent({
      ...ids,
      seq: ++seq,
      stage: 'killing',
      message: 'entered killing',
      details: { failureType: failure.type, message: failure.message },
      at: killingAt,
    });
    if (diag?.daemonLogTail) await store.saveLogTail({ ...ids, source: 'cuzk-daemon', text: diag.daemonLogTail });
    if (diag?.outputTail) await store.saveLogTail({ ...ids, source: 'output', text: diag.outputTail });
    await store.recordOutcome({
      ...ids,
      outcome: 'killed',
      failureType: failure.type,
      reason: failure.message,
      machineId: rented?.offer.machineId ?? null,
      destroyed,
    });
    if (rented && !rentedDestroyed) {
      return await destroyFailed(rented.instanceId, failure, destroyErr);
    }
    fleetMetrics.outcome('killed', failure.type, rented?.offer.gpuName ?? 'unknown');
    if (rentedAtMs !== null) fleetMetrics.timeToVerdictSeconds((Date.now() - rentedAtMs) / 1000, 'killed');
    lifecycleLog('kill', { ...logFields(), failureType: failure.type, destroyed });
    await enter('killed', undefined, { failureType: failure.type, destroyed });
    // After the destroy and its record; awaited because the workflow ends next, bounded by its timeout.
    await notify({ kind: 'kill', ...notifyFields(), failureType: failure.type, reason: failure.message });
  }

  /** Money may be leaking: count it, log it, tell the webhook, and fail loudly with the instance to destroy by hand. */
  async function destroyFailed(instanceId: number, failure: Classified, destroyErr: unknown): Promise<never> {
    fleetMetrics.destroyFailed(failure.type);
    lifecycleLog('kill', { ...logFields(), failureType: FailureType.DestroyFailed, killReason: failure.type });
    // Awaited (the workflow ends next) but bounded by its own short timeout.
    await notify({
      kind: 'destroy_failed',
      ...notifyFields(),
      failureType: failure.type,
      reason: `destroy failed after retries; destroy instance ${instanceId} by hand`,
    });
    throw ApplicationFailure.create({
      type: FailureType.DestroyFailed,
      message: `instance ${instanceId} could not be destroyed and may still be billing; destroy it by hand`,
      nonRetryable: true,
      details: [{ instanceId, killReason: failure.type }],
      cause: destroyErr instanceof Error ? destroyErr : undefined,
    });
  }

  async function tryCollect() {
    try {
      const d = await host.quick.collectDiagnostics();
      return { ...d, outputTail: d.paramfetchTail };
    } catch {
      return undefined;
    }
  }

  function result(outcome: 'promoted' | 'killed', failureType: FailureType | null, reason: string): LifecycleResult {
    return {
      workflowId,
      outcome,
      offerId: input.offerId,
      instanceId: rented?.instanceId ?? null,
      machineId: rented?.offer.machineId ?? null,
      gpuName: rented?.offer.gpuName ?? null,
      rate: status.rate,
      failureType,
      reason,
    };
  }
}

/**
 * Races the batch against a workflow timer. On timeout the activity is cancelled and, because it waits
 * for cancellation to complete, hands back how far it got; that partial report is the timeout's evidence.
 */
async function benchmarkAgainstTimer(
  runBenchmark: GpuHostActivities['runBenchmark'],
  batchInput: Parameters<GpuHostActivities['runBenchmark']>[0],
  benchmarkSec: number,
): Promise<BenchmarkReport> {
  const { count, concurrency } = batchInput;
  const batchScope = new CancellationScope();
  const timerScope = new CancellationScope();
  const batch = batchScope.run(() => runBenchmark(batchInput));
  const timer = timerScope
    .run(() => sleep(benchmarkSec * 1000, { summary: `benchmark deadline (${benchmarkSec} s)` }))
    .then(
      () => 'timer' as const,
      () => 'cancelled' as const,
    );
  try {
    const first = await Promise.race([batch.then(() => 'batch' as const), timer]);
    if (first === 'batch') return await batch;
    batchScope.cancel();
    return await batch;
  } catch (err) {
    // The host acknowledged our cancel without a report: a timeout with unknown progress.
    if (isCancellation(err) && batchScope.consideredCancelled && !CancellationScope.current().consideredCancelled) {
      return {
        requested: count,
        completed: 0,
        elapsedMs: benchmarkSec * 1000,
        concurrency,
        timings: [],
        stoppedEarly: true,
      };
    }
    throw err;
  } finally {
    timerScope.cancel();
  }
}
