import { type ChildProcess, spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { inject } from 'vitest';
import { timeScale } from '../../infra/sim/scenario.js';
import { pollUntil } from '../../infra/dev/poll.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The production control worker (`workers/control-worker.ts`) as an OS process of its own. */
export interface ControlProcess {
  pid: number;
  /** The worker's Temporal identity: the SDK's default `<pid>@<hostname>`. */
  identity: string;
  exited: Promise<ProcessExit>;
  /** kill -9: no shutdown hook runs, in-flight tasks are simply lost. */
  kill9(): Promise<ProcessExit>;
  /** Graceful stop (SIGTERM), SIGKILL if it has not exited within `graceMs`. */
  stop(graceMs?: number): Promise<ProcessExit>;
  output(): string;
}

export interface ControlProcessEnv {
  TEMPORAL_ADDRESS: string;
  DATABASE_URL: string;
  VAST_API_URL: string;
  VAST_API_KEY: string;
  CONTROL_TASK_QUEUE: string;
  HOST_TEMPORAL_ADDRESS?: string;
  VAST_POLL_INTERVAL_MS?: string;
  /** The simulated hosts' clock: without it the worker judges their compressed proofs as real ones. */
  SIM_TIME_SCALE?: string;
}

/**
 * Control workers of one test file, each a process of its own on the test run's Temporal and Postgres,
 * against the Vast API at `vastUrl()` (a simulator or a proxy in front of one); `stopAll()` in afterAll.
 */
export function testControlWorkers(vastUrl: () => string, vastApiKey: string, taskQueue: string) {
  const procs: ControlProcess[] = [];
  return {
    start(): ControlProcess {
      const proc = spawnControlWorker({
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        DATABASE_URL: inject('databaseUrl'),
        VAST_API_URL: vastUrl(),
        VAST_API_KEY: vastApiKey,
        CONTROL_TASK_QUEUE: taskQueue,
        VAST_POLL_INTERVAL_MS: '200',
      });
      procs.push(proc);
      return proc;
    },
    async stopAll(): Promise<void> {
      for (const p of procs) await p.stop();
    },
    /** Each worker's last output, for a failed test's report. */
    outputs(): string {
      return procs.map((p) => `--- control worker ${p.identity}:\n${p.output()}`).join('\n');
    },
  };
}

/** Spawns `node --import tsx workers/control-worker.ts` with only the environment it is configured by. */
export function spawnControlWorker(env: ControlProcessEnv): ControlProcess {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'workers/control-worker.ts')],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      // The hosts are simulated: the worker must know their clock, as the in-process one does (fleet-env.ts).
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SIM_TIME_SCALE: String(timeScale()), ...env },
    },
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error('control worker did not start');
  let out = '';
  const keep = (d: Buffer) => (out = (out + d.toString()).slice(-8000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<ProcessExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  // A test that fails half-way must not leave a worker polling the shared server.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  void exited.then(() => process.removeListener('exit', killOnExit));
  return {
    pid,
    identity: `${pid}@${os.hostname()}`,
    exited,
    async kill9() {
      child.kill('SIGKILL');
      return exited;
    },
    async stop(graceMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const exit = await exited;
      clearTimeout(timer);
      return exit;
    },
    output: () => out,
  };
}

/**
 * Waits until a worker with this identity polls the queue for workflow tasks: a process that started
 * but never polls (bad config, bundling failure) fails here instead of later as a mystery timeout.
 */
export async function waitForPoller(
  client: Client,
  taskQueue: string,
  proc: ControlProcess,
  timeoutMs: number,
): Promise<void> {
  const { TaskQueueKind, TaskQueueType } = proto.temporal.api.enums.v1;
  const polling = pollUntil(
    `control worker ${proc.identity} polling ${taskQueue}`,
    async () => {
      const res = await client.workflowService.describeTaskQueue({
        namespace: client.options.namespace,
        taskQueue: { name: taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        taskQueueType: TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      return res.pollers?.some((p) => p.identity === proc.identity) ? true : undefined;
    },
    { timeoutMs, intervalMs: 250 },
  );
  // A worker that dies while starting fails at once, with its output.
  const died = proc.exited.then((exit) => {
    throw new Error(`control worker exited (${JSON.stringify(exit)}) before polling: ${proc.output()}`);
  });
  // Whichever loses the race settles later (died on the test's own stop): not an unhandled rejection.
  void died.catch(() => undefined);
  void polling.catch(() => undefined);
  await Promise.race([polling, died]);
}
