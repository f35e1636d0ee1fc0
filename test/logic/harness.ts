import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import {
  bundleWorkflowCode,
  DefaultLogger,
  type LogEntry,
  makeTelemetryFilterString,
  NativeConnection,
  Runtime,
  Worker,
} from '@temporalio/worker';
import { inject } from 'vitest';
import type { GpuHostActivities } from '../../activities/gpu-host/activities.js';
import type { RentOfferInput } from '../../activities/vast/activities.js';
import { WORKFLOWS_PATH } from '../../workers/setup/workflow-source.js';
import { lifecycleStatusQuery } from '../../workflows/definitions.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { clockOf, clockRate, mapReportUnits } from '../../workflows/domain/policy/clock.js';
import type { BenchmarkReport, LifecycleRequest, LifecycleResult, OfferFacts } from '../../workflows/domain/types.js';
import { waitUntil } from '../../infra/dev/poll.js';
import { fleetMetricsSinks } from '../../workers/setup/metrics-registry.js';

/**
 * The lifecycle's decisions, tested in seconds: the real workflow code on the real (shared) Temporal
 * dev server, with every activity a stub. Vast, store and visibility stubs run on a control queue of
 * the test's own; the host's steps on the host queue the workflow names when it rents, so a test can
 * make a host that never connects, answers late, fails a step or proves at any rate.
 */

/** The lifecycles' own log lines (INFO and up), for tests that read what an operator's log shows. */
export const logged: LogEntry[] = [];

// Expected kills are logged by the SDK at WARN; print only real errors, keep the workflows' lines.
Runtime.install({
  logger: new DefaultLogger('INFO', (entry) => {
    if (entry.level === 'ERROR') console.error(entry.message, entry.meta ?? '');
    else if (entry.meta && 'workflowId' in entry.meta) logged.push(entry);
  }),
  telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} } },
});

let bundle: Promise<{ code: string }> | null = null;
const workflowBundle = () =>
  (bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') }));

export type HostStubs = { [K in keyof GpuHostActivities]?: GpuHostActivities[K] };

export interface Scenario {
  host?: HostStubs;
  /** false: no worker ever polls the host's queue. */
  hostConnects?: boolean;
  offer?: Partial<OfferFacts>;
  /** What `instanceState` answers on each watch sample (the default: running at the rented price). */
  instanceState?: (sample: number) => { status: string | null; dph: number; unreadable?: string };
  rent?: (input: RentOfferInput) => Promise<void>;
  /** The expiry of the host's token the rent reports (default: none, as without a token key). */
  hostTokenExpiresAt?: string;
  /** Runs before `awaitRunning` answers: throw to make the instance never run. */
  awaitRunning?: () => Promise<void>;
  /** What the kill path's sweep of the lifecycle's label finds and destroys (default: nothing). */
  destroyLabelled?: () => { destroyed: number[] };
  /** The machine's standing the store reports before the benchmark (default: good). */
  standing?: 'good' | 'probation' | 'bad';
  /** Which rental of its offer the store says this is (default: the first). */
  rentalNumber?: number;
  /** Runs before `destroyInstance` answers: throw to make the destroy fail. */
  destroy?: (instanceId: number) => Promise<void>;
  /** What the notify activity does (default: nothing configured, `{ sent: false }`); throw for a receiver that is down. */
  notify?: (input: unknown) => Promise<{ sent: boolean }>;
  /** The fleet's promoted hosts the store reports for keep by the dollar (default: none); throw for an outage. */
  fleet?: () => Array<{ rate: number; dph: number }>;
}

/** Every stub call, in order, for assertions on what the workflow asked for. */
export interface Call {
  name: string;
  input: unknown;
}

export const OFFER: OfferFacts = {
  offerId: 7,
  machineId: 4242,
  hostId: 99,
  gpuName: 'RTX 4090',
  numGpus: 2,
  cpuRamMb: 257_024,
  dphTotal: 0.5,
};

/**
 * The clock the harness's lifecycles run on, 1000x compressed (a watch sample every 0.2 s stands for minutes),
 * as the simulators' is: the stub host measures on it and the lifecycle converts what it reports.
 */
export const STUB_CLOCK = clockOf(0.001);

/**
 * A benchmark report written in real units (as the tests read them), as the stub host measures it: on the
 * stub clock. The lifecycle brings it back to real units (workflows/domain/policy/clock.ts).
 */
export function onStubClock(r: BenchmarkReport): BenchmarkReport {
  return mapReportUnits(
    r,
    (x) => x * STUB_CLOCK.scale,
    (x) => clockRate(x, STUB_CLOCK),
  );
}

/** A benchmark report of `completed` proofs in `elapsedMs` (only these two make the rate). */
export function report(completed: number, elapsedMs: number, over: Partial<BenchmarkReport> = {}): BenchmarkReport {
  return {
    requested: 12,
    completed,
    elapsedMs,
    concurrency: 4,
    timings: Array.from({ length: completed }, (_, index) => ({
      index,
      // A few seconds apart, as real proofs are (identical ones are an ImplausibleResult).
      totalMs: 100_000 + index * 1_000,
      synthesisMs: 40_000,
      gpuComputeMs: 60_000,
    })),
    deadlineReached: false,
    ...over,
  };
}

const healthyHost = (): Required<HostStubs> => {
  let completed = 0;
  return {
    // A host that matches the harness offer (2x RTX 4090) with room, speed and the C1 input in its image.
    checkFitness: async () => ({
      gpus: [0, 1].map((index) => ({ index, name: 'NVIDIA GeForce RTX 4090', memoryMiB: 24_564 })),
      driverError: null,
      driverVersion: '550.54.14',
      cudaVersion: 12.4,
      smiForm: 'driver' as const,
      unreadable: [],
      disk: { path: '/var/tmp/filecoin-proof-parameters', freeBytes: 400 * 2 ** 30, totalBytes: 500 * 2 ** 30 },
      diskWrite: { bytes: 256 * 2 ** 20, ms: 300 },
      download: null,
      elapsedMs: 900,
    }),
    ensureBenchInput: async () => ({ source: 'present' as const, bytes: 50_000_000, elapsedMs: 5 }),
    paramfetch: async () => ({ elapsedMs: 10 }),
    inspectHost: async () => ({ pceCached: false }),
    startDaemon: async () => ({ readyMs: 5, gpus: 2 }),
    warmupProof: async () => ({ index: 0, totalMs: 90_000, synthesisMs: 40_000, gpuComputeMs: 50_000 }),
    // 12 proofs in 10 minutes: 72 proofs/h, well above the default minimum of 29.
    runBenchmark: async () => report(12, 600_000),
    collectDiagnostics: async () => ({ daemonLogTail: 'daemon log tail', paramfetchTail: '' }),
    startProduction: async () => ({ started: true }),
    // 20 proofs a sample, on the stub clock: 360 proofs/h at the fastest (samples 0.2 s = 200 real s apart), under
    // what 2x RTX 4090 can do, and above the floor until samples are 3 s apart (a loaded machine).
    sampleDaemon: async () => ({ completed: (completed += 20), failed: 0, uptimeSec: 60, at: Date.now() }),
  };
};

/** Short real timeouts, so a silent host or a fired timer is seen within seconds. */
export const FAST_TIMEOUTS = {
  waitRunningSec: 5,
  hostConnectSec: 3,
  paramfetchSec: 10,
  paramfetchStallSec: 2,
  daemonReadySec: 4,
  proofDeadlineSec: 4,
  benchmarkSec: 4,
  heartbeatSec: 2,
};

export interface LogicEnv {
  client: Client;
  calls: Call[];
  count(name: string): number;
  /** Starts a lifecycle under `scenario`; `over` is merged into a fast request. */
  start(scenario: Scenario, over?: Partial<LifecycleRequest>): Promise<Run>;
  close(): Promise<void>;
}

export interface Run {
  workflowId: string;
  firstRunId: string;
  calls: Call[];
  count(name: string): number;
  result(): Promise<LifecycleResult>;
  /** The lifecycle's failure, or an error if it did not fail. */
  failure(): Promise<ApplicationFailure>;
}

export async function startLogicEnv(): Promise<LogicEnv> {
  const address = inject('temporalAddress');
  const connection = await NativeConnection.connect({ address });
  const clientConnection = await Connection.connect({ address });
  const client = new Client({ connection: clientConnection });
  const all: Call[] = [];
  const byWorkflow = new Map<
    string,
    { scenario: Scenario; calls: Call[]; samples: number; hostWorker?: Worker; run?: Promise<void> }
  >();
  const controlQueue = `logic-control-${randomUUID()}`;

  const current = () => {
    const wfId = Context.current().info.workflowExecution?.workflowId ?? '';
    const entry = byWorkflow.get(wfId);
    if (!entry) throw new Error(`no scenario for ${wfId}`);
    return entry;
  };
  const record = (name: string, input: unknown) => {
    const call = { name, input };
    all.push(call);
    current().calls.push(call);
  };

  async function startHost(wfId: string, taskQueue: string): Promise<void> {
    const entry = byWorkflow.get(wfId)!;
    const stubs = { ...healthyHost(), ...entry.scenario.host };
    const activities = Object.fromEntries(
      Object.entries(stubs).map(([name, fn]) => [
        name,
        async (...args: unknown[]) => {
          const call = { name, input: args[0] };
          all.push(call);
          entry.calls.push(call);
          const result = await (fn as (...a: unknown[]) => Promise<unknown>)(...args);
          return name === 'runBenchmark' ? onStubClock(result as BenchmarkReport) : result;
        },
      ]),
    );
    const w = await Worker.create({ connection, taskQueue, activities });
    entry.hostWorker = w;
    entry.run = w.run();
  }

  const offerOf = (wfId: string): OfferFacts => ({ ...OFFER, ...byWorkflow.get(wfId)?.scenario.offer });
  const control = await Worker.create({
    connection,
    taskQueue: controlQueue,
    workflowBundle: await workflowBundle(),
    // The workflows report metrics through this sink (workflows/metrics-sinks.ts), as in production.
    sinks: fleetMetricsSinks(),
    activities: {
      async rentOffer(input: RentOfferInput) {
        record('rentOffer', input);
        const { scenario } = current();
        await scenario.rent?.(input);
        const wfId = Context.current().info.workflowExecution?.workflowId ?? '';
        if (scenario.hostConnects !== false && !byWorkflow.get(wfId)?.hostWorker)
          await startHost(wfId, input.hostTaskQueue);
        const expiry = scenario.hostTokenExpiresAt;
        return {
          instanceId: 900_000 + (input.offerId % 1000),
          offer: offerOf(wfId),
          ...(expiry ? { hostTokenExpiresAt: expiry } : {}),
        };
      },
      async awaitRunning(input: unknown) {
        record('awaitRunning', input);
        await current().scenario.awaitRunning?.();
        return { status: 'running' };
      },
      async instanceState(instanceId: number) {
        record('instanceState', instanceId);
        const wfId = Context.current().info.workflowExecution?.workflowId ?? '';
        const entry = current();
        return entry.scenario.instanceState?.(entry.samples++) ?? { status: 'running', dph: offerOf(wfId).dphTotal };
      },
      async destroyInstance(instanceId: number) {
        record('destroyInstance', instanceId);
        await current().scenario.destroy?.(instanceId);
        return { alreadyGone: false };
      },
      async destroyLabelled(label: string) {
        record('destroyLabelled', label);
        return current().scenario.destroyLabelled?.() ?? { destroyed: [] };
      },
      async recordInstance(input: unknown) {
        record('recordInstance', input);
      },
      async recordEvent(input: unknown) {
        record('recordEvent', input);
      },
      async recordBenchmark(input: unknown) {
        record('recordBenchmark', input);
      },
      async recordPriceMove(input: unknown) {
        record('recordPriceMove', input);
        return true;
      },
      async recordOutcome(input: unknown) {
        record('recordOutcome', input);
        return { markedBad: false };
      },
      async rentalNumber(input: unknown) {
        record('rentalNumber', input);
        return current().scenario.rentalNumber ?? 1;
      },
      async machineStanding(input: unknown) {
        record('machineStanding', input);
        return { standing: current().scenario.standing ?? 'good', reason: null };
      },
      async saveLogTail(input: unknown) {
        record('saveLogTail', input);
      },
      async rentedInstances() {
        record('rentedInstances', null);
        return (current().scenario.fleet?.() ?? []).map((h, i) => ({
          rentalKey: `other-${i}`,
          workflowId: `other-${i}`,
          offerId: 1000 + i,
          machineId: 5000 + i,
          outcome: 'promoted',
          benchRate: h.rate,
          dphTotal: h.dph,
          bidDph: null,
        }));
      },
      async notify(input: unknown) {
        record('notify', input);
        return (await current().scenario.notify?.(input)) ?? { sent: false };
      },
    },
  });
  const controlRun = control.run();

  const counter = (calls: Call[]) => (name: string) => calls.filter((c) => c.name === name).length;

  return {
    client,
    calls: all,
    count: counter(all),
    async start(scenario, over = {}) {
      const workflowId = `logic-${randomUUID()}`;
      const entry = { scenario, calls: [] as Call[], samples: 0 };
      byWorkflow.set(workflowId, entry);
      const handle = await client.workflow.start(instanceLifecycle, {
        taskQueue: controlQueue,
        workflowId,
        args: [
          {
            offerId: OFFER.offerId,
            benchmarkProofs: 12,
            clock: STUB_CLOCK,
            ...over,
            timeouts: { ...FAST_TIMEOUTS, ...over.timeouts },
          },
        ],
        workflowExecutionTimeout: '2 minutes',
      });
      return {
        workflowId,
        firstRunId: handle.firstExecutionRunId,
        calls: entry.calls,
        count: counter(entry.calls),
        result: () => handle.result(),
        async failure() {
          const err = await handle.result().then(
            (r) => new Error(`expected a failure, the lifecycle ended ${r.outcome}`),
            (e: unknown) => e,
          );
          if (!(err instanceof WorkflowFailedError)) throw err;
          if (!(err.cause instanceof ApplicationFailure)) throw err;
          return err.cause;
        },
      };
    },
    async close() {
      for (const e of byWorkflow.values()) e.hostWorker?.shutdown();
      await Promise.all([...byWorkflow.values()].map((e) => e.run));
      control.shutdown();
      await controlRun;
      await clientConnection.close();
      await connection.close();
    },
  };
}

/** A host-side failure of the given type, as the real GPU-host activities throw it. */
export function hostFailure(type: string, message = `${type} (stub)`): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true, details: [{ diagnostics: {} }] });
}

/** Waits until `cond` holds, polling every 100 ms; throws naming what was awaited after `ms`. */
export function until(what: string, cond: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  return waitUntil(what, cond, { timeoutMs: ms, intervalMs: 100 });
}

/** The inputs of every stub call of `name` a run made, in order. */
export const inputsOf = (run: Run, name: string) =>
  run.calls.filter((c) => c.name === name).map((c) => c.input as Record<string, unknown>);

/** A promoted lifecycle watches for ever: waits for its promotion and its record, then cancels it. */
export async function cancelAfterPromotion(env: LogicEnv, run: Run): Promise<void> {
  const handle = env.client.workflow.getHandle(run.workflowId);
  await until('promotion', async () => (await handle.query(lifecycleStatusQuery)).stage === 'promoted');
  // The stage turns before the promotion's record is written: a cancel in between would cancel that write.
  await until('the promotion recorded', () => run.count('recordOutcome') >= 1);
  await handle.cancel();
  await run.result().catch(() => undefined);
}
