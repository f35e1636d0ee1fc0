import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { expectPromoted } from '../helpers/expect-promoted.js';
import { fleetScaler, instanceLifecycle } from '../../workflows/index.js';
import { hostTaskQueue, instanceLabel, lifecycleWorkflowId, rentalKey } from '../../workflows/domain/task-queues.js';
import type { LifecycleRequest } from '../../workflows/domain/types.js';
import { cancelAndWait } from '../helpers/cancel-and-wait.js';
import { fastRequest, type FleetEnv, startFleetEnv, simClock } from '../helpers/fleet-env.js';
import { hostProcesses } from '../helpers/host-processes.js';
import { simOffer } from '../helpers/offers.js';
import { pollUntil } from '../../infra/dev/poll.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const MIN_RATE = 29;
// Healthy hosts: each offer is rented twice below, on the same workflow id (the id names the offer).
const killedThenPromoted = simOffer({ host: { proofSec: 100 } });
// A GPU model of its own, so the scaler below finds this offer only.
const watchKilledTwice = simOffer({ gpu_name: `RERENT-${Date.now()}`, host: { proofSec: 100 } });
const contested = simOffer({ host: { proofSec: 100 } });

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv([killedThenPromoted, watchKilledTwice, contested]);
});
afterAll(async () => env?.close());

/** One rental as the test saw it: its key and label, its Vast instance, and its host's processes. */
interface Rental {
  handle: WorkflowHandle<typeof instanceLifecycle>;
  firstRunId: string;
  key: string;
  label: string;
  instanceId: number;
  hostPids: Set<number>;
  workDir: string;
}

/** Starts a lifecycle on the offer's own workflow id and waits until its host is up (its processes seen). */
async function rent(offerId: number, req: LifecycleRequest): Promise<Rental> {
  const handle = await env.client.workflow.start(instanceLifecycle, {
    taskQueue: env.taskQueue,
    workflowId: lifecycleWorkflowId(offerId),
    args: [req],
    workflowExecutionTimeout: '5 minutes',
  });
  return rentalOf(handle, handle.firstExecutionRunId);
}

/** A started rental, once its host is up. */
async function rentalOf(handle: WorkflowHandle<typeof instanceLifecycle>, firstRunId: string): Promise<Rental> {
  const key = rentalKey(handle.workflowId, firstRunId);
  const label = instanceLabel(key);
  const host = await pollUntil(
    `the host of rental ${key}`,
    () => {
      const inst = env.sim.ledger().find((r) => r.label === label);
      const procs = inst ? hostProcesses(inst.id) : [];
      const workDir = procs[0]?.workDir;
      return inst && workDir ? { instanceId: inst.id, hostPids: new Set(procs.map((p) => p.pid)), workDir } : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  return { handle, firstRunId, key, label, ...host };
}

/** A scaler run that wants just one more host, of this offer's GPU model only; returns the rental it starts. */
async function rentByScaler(o: typeof watchKilledTwice): Promise<Rental> {
  // The database is shared by every test file: the target sits just above what is promoted already.
  const promoted = await env.pool.query<{ rate: number }>(
    `SELECT COALESCE(SUM(bench_rate), 0)::float AS rate FROM instances WHERE destroyed_at IS NULL AND outcome = 'promoted'`,
  );
  const result = await env.client.workflow.execute(fleetScaler, {
    taskQueue: env.taskQueue,
    workflowId: `scaler-rerent-${o.id}`,
    args: [
      {
        targetRate: (promoted.rows[0]?.rate ?? 0) + 1,
        maxDph: 1000,
        maxInstances: 1000,
        maxConcurrentBenchmarks: 1000,
        explorationSlots: 0,
        minRate: MIN_RATE,
        offerCheckSec: 2,
        filter: { gpuModels: [o.gpu_name], minRamMb: 64_000, minReliability: 0.9, minCuda: 12, maxOfferDph: 3 },
        lifecycle: {
          benchmarkProofs: 4,
          timeouts: fastRequest(o.id).timeouts,
          clock: simClock(),
          watch: { intervalSec: 1 },
        },
      },
    ],
    workflowExecutionTimeout: '2 minutes',
  });
  // Known from its first rental's benchmark, the offer is rented again on the same (closed) workflow id.
  expect(result.started, JSON.stringify(result)).toMatchObject([
    { offerId: o.id, workflowId: lifecycleWorkflowId(o.id), source: 'machine' },
  ]);
  const handle = env.client.workflow.getHandle<typeof instanceLifecycle>(lifecycleWorkflowId(o.id));
  const firstRunId = (await handle.describe()).raw.workflowExecutionInfo?.firstRunId;
  if (!firstRunId) throw new Error('the server did not say which run started the rental');
  return rentalOf(handle, firstRunId);
}

async function failureOf(handle: WorkflowHandle<typeof instanceLifecycle>): Promise<string> {
  const err = await handle.result().then(
    (r) => new Error(`ended ${r.outcome}`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return (cause as ApplicationFailure).type ?? '';
}

async function preempt(r: Rental): Promise<void> {
  const res = await fetch(`${env.sim.url}/_sim/instances/${r.instanceId}/preempt`, { method: 'POST' });
  expect(res.ok).toBe(true);
}

/** Every event of a rental: its first run and each run it continued as new into. */
/** Each run's events apart: event ids start again at 1 in a run continued as new. */
async function rentalRuns(r: Rental): Promise<HistoryEvent[][]> {
  const runs: HistoryEvent[][] = [];
  let runId: string | null | undefined = r.firstRunId;
  while (runId) {
    const events: HistoryEvent[] =
      (await env.client.workflow.getHandle(r.handle.workflowId, runId).fetchHistory()).events ?? [];
    runs.push(events);
    runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
  }
  return runs;
}

/** The queues a rental's host activities were scheduled on, and the workers that picked them up. */
async function hostActivities(r: Rental): Promise<{ queues: Set<string>; workers: Set<string>; count: number }> {
  const queues = new Set<string>();
  const workers = new Set<string>();
  let count = 0;
  for (const events of await rentalRuns(r)) {
    const queueOf = new Map<string, string>();
    for (const e of events) {
      const s = e.activityTaskScheduledEventAttributes;
      if (s && e.eventId) queueOf.set(String(e.eventId), s.taskQueue?.name ?? '');
    }
    for (const q of queueOf.values()) if (q.startsWith('host/')) queues.add(q);
    for (const e of events) {
      const started = e.activityTaskStartedEventAttributes;
      if (!started || !queueOf.get(String(started.scheduledEventId))?.startsWith('host/')) continue;
      workers.add(started.identity ?? '');
      count++;
    }
  }
  return { queues, workers, count };
}

/** Each rental's host activities went to its own queue and ran in its own host's process, never the other's. */
async function expectHostsApart(a: Rental, b: Rental): Promise<void> {
  expect(a.label).not.toBe(b.label);
  for (const [mine, theirs] of [
    [a, b],
    [b, a],
  ] as const) {
    const acts = await hostActivities(mine);
    expect(acts.count, `host activities of ${mine.key}`).toBeGreaterThan(3);
    expect([...acts.queues]).toEqual([hostTaskQueue(mine.label)]);
    for (const w of acts.workers) {
      const pid = Number(w.split('@')[0]);
      expect(mine.hostPids.has(pid), `${w} is a process of ${mine.key}'s host`).toBe(true);
      expect(theirs.hostPids.has(pid), `${w} is not a process of ${theirs.key}'s host`).toBe(false);
    }
  }
  // What the simulator's hosts were told to poll: each its own rental's queue.
  const ledger = env.sim.ledger();
  expect(ledger.find((l) => l.id === a.instanceId)?.label).toBe(a.label);
  expect(ledger.find((l) => l.id === b.instanceId)?.label).toBe(b.label);
}

interface InstanceRow {
  rental_key: string;
  label: string;
  instance_id: string;
  outcome: string | null;
  failure_type: string | null;
  bench_rate: number | null;
  destroyed: boolean;
}

async function instanceRows(workflowId: string): Promise<InstanceRow[]> {
  const res = await env.pool.query<InstanceRow>(
    `SELECT rental_key, label, instance_id, outcome, failure_type, bench_rate, destroyed_at IS NOT NULL AS destroyed
     FROM instances WHERE workflow_id = $1 ORDER BY created_at`,
    [workflowId],
  );
  return res.rows;
}

/** A rental's events: numbered 1..n with no gap or mix, from provisioning on. */
async function expectCompleteEvents(r: Rental, stages: string[]): Promise<string[]> {
  const res = await env.pool.query<{ seq: number; stage: string; workflow_id: string }>(
    'SELECT seq, stage, workflow_id FROM lifecycle_events WHERE rental_key = $1 ORDER BY seq',
    [r.key],
  );
  expect(
    res.rows.map((e) => e.seq),
    `event numbers of ${r.key}`,
  ).toEqual(res.rows.map((_, i) => i + 1));
  expect(res.rows.every((e) => e.workflow_id === r.handle.workflowId)).toBe(true);
  const seen = res.rows.map((e) => e.stage);
  expect(seen[0]).toBe('provisioning');
  for (const s of stages) expect(seen, `${r.key} entered ${s}`).toContain(s);
  return seen;
}

async function benchmarks(workflowId: string): Promise<Array<{ rental_key: string; completed: number }>> {
  return (
    await env.pool.query<{ rental_key: string; completed: number }>(
      'SELECT rental_key, completed FROM benchmark_results WHERE workflow_id = $1 ORDER BY recorded_at',
      [workflowId],
    )
  ).rows;
}

async function machineFacts(machineId: number) {
  const perf = await env.pool.query<{ benchmarks: number }>('SELECT benchmarks FROM host_perf WHERE machine_id = $1', [
    machineId,
  ]);
  const fails = await env.pool.query<{ failure_type: string; count: number }>(
    'SELECT failure_type, count FROM machine_failures WHERE machine_id = $1 ORDER BY failure_type',
    [machineId],
  );
  const bad = await env.pool.query<{ reason: string; source: string }>(
    'SELECT reason, source FROM bad_machines WHERE machine_id = $1',
    [machineId],
  );
  return {
    benchmarks: perf.rows[0]?.benchmarks ?? 0,
    failures: Object.fromEntries(fails.rows.map((f) => [f.failure_type, f.count])),
    bad: bad.rows[0] ?? null,
  };
}

const servingOn = (log: string) => [...log.matchAll(/ready, serving on (\S+)/g)].map((m) => m[1]);

describe('one identity per rental: an offer rented again keeps each rental its own records', () => {
  it('killed, then rented again and promoted: two complete, separate rentals', { timeout: 300_000 }, async () => {
    const o = killedThenPromoted;
    const id = lifecycleWorkflowId(o.id);
    // First rental: a bar no host reaches, so it is killed at its verdict (after its benchmark).
    const first = await rent(o.id, fastRequest(o.id, { minRate: MIN_RATE * 1000 }));
    expect(await failureOf(first.handle)).toBe('BenchRateBelowMin');

    // Second rental of the same offer, same workflow id: promoted, and watched across continue-as-new.
    const second = await rent(
      o.id,
      fastRequest(o.id, { minRate: MIN_RATE, watch: { intervalSec: 1, samplesPerRun: 2 } }),
    );
    expect(second.key).not.toBe(first.key);
    await expectPromoted(env.client, id);
    await pollUntil(
      `${id} to continue as new while watching`,
      async () => ((await env.client.workflow.getHandle(id).describe()).runId !== second.firstRunId ? true : undefined),
      { timeoutMs: 60_000 },
    );

    // The promoted, running host is recorded as such; the first rental's kill stays the first rental's.
    const rows = await instanceRows(id);
    expect(rows).toMatchObject([
      {
        rental_key: first.key,
        label: first.label,
        instance_id: String(first.instanceId),
        outcome: 'killed',
        failure_type: 'BenchRateBelowMin',
        destroyed: true,
      },
      {
        rental_key: second.key,
        label: second.label,
        instance_id: String(second.instanceId),
        outcome: 'promoted',
        failure_type: null,
        destroyed: false,
      },
    ]);
    expect(rows[0]?.bench_rate).toBeGreaterThan(0);
    expect(rows[1]?.bench_rate).toBeGreaterThanOrEqual(MIN_RATE);
    expect(env.sim.ledger().find((l) => l.id === second.instanceId)).toMatchObject({
      destroyed: false,
      hostAlive: true,
    });

    // The operator ends the second rental: its kill, logged after continue-as-new, is still its own.
    await cancelAndWait(env.client, id);
    const after = await instanceRows(id);
    expect(after[0]).toMatchObject({ rental_key: first.key, outcome: 'killed', failure_type: 'BenchRateBelowMin' });
    expect(after[1]).toMatchObject({
      rental_key: second.key,
      outcome: 'killed',
      failure_type: 'CancelledByOperator',
      destroyed: true,
    });

    const firstStages = await expectCompleteEvents(first, ['benchmark', 'evaluating', 'killing', 'killed']);
    expect(firstStages).not.toContain('promoted');
    const secondStages = await expectCompleteEvents(second, ['benchmark', 'promoted', 'killing', 'killed']);
    expect(secondStages.indexOf('killed')).toBeGreaterThan(secondStages.indexOf('promoted'));

    expect((await benchmarks(id)).map((b) => b.rental_key)).toEqual([first.key, second.key]);
    const machine = await machineFacts(o.machine_id);
    expect(machine.benchmarks).toBe(2);
    // A too-slow verdict counts against the machine at once; an operator's cancel never does.
    expect(machine.failures).toEqual({ BenchRateBelowMin: 1 });
    expect(machine.bad?.source).toBe('rule');

    // Each rental's daemon log tail is its own host's log.
    const tails = await env.pool.query<{ rental_key: string; text: string }>(
      `SELECT rental_key, text FROM log_tails WHERE workflow_id = $1 AND source = 'cuzk-daemon'`,
      [id],
    );
    const tailOf = (r: Rental) => tails.rows.find((t) => t.rental_key === r.key)?.text ?? '';
    for (const [mine, theirs] of [
      [first, second],
      [second, first],
    ] as const) {
      const own = servingOn(readFileSync(path.join(mine.workDir, 'cuzk-daemon.log'), 'utf8'));
      const other = servingOn(readFileSync(path.join(theirs.workDir, 'cuzk-daemon.log'), 'utf8'));
      expect(own.length).toBeGreaterThan(0);
      expect(servingOn(tailOf(mine)), `daemon tail of ${mine.key}`).toEqual(own);
      expect(own.some((a) => other.includes(a))).toBe(false);
    }

    await expectHostsApart(first, second);
    expect(
      env.sim
        .ledger()
        .filter((l) => l.offerId === o.id)
        .map((l) => l.destroyed),
    ).toEqual([true, true]);
  });

  it(
    'promoted, killed by its watch, rented again by the scaler and killed again: the second strike marks the machine',
    { timeout: 300_000 },
    async () => {
      const o = watchKilledTwice;
      const id = lifecycleWorkflowId(o.id);
      const req = fastRequest(o.id, { minRate: MIN_RATE, watch: { intervalSec: 1 } });
      const rentals: Rental[] = [];
      for (const strike of [1, 2]) {
        // An operator's rental first; after its transient kill, the scaler rents the offer again.
        const r = strike === 1 ? await rent(o.id, req) : await rentByScaler(o);
        rentals.push(r);
        await expectPromoted(env.client, id);
        // The host vanishes under a promoted rental: its watch kills it (HostLost, counted after two).
        await preempt(r);
        expect(await failureOf(r.handle)).toBe('HostLost');
        const machine = await machineFacts(o.machine_id);
        expect(machine.failures).toEqual({ HostLost: strike });
        expect(machine.benchmarks).toBe(strike);
        if (strike === 1) expect(machine.bad).toBeNull();
        else expect(machine.bad).toMatchObject({ source: 'rule', reason: expect.stringMatching(/^HostLost x2: /) });
      }
      const [first, second] = rentals as [Rental, Rental];

      const rows = await instanceRows(id);
      expect(rows).toMatchObject([
        {
          rental_key: first.key,
          instance_id: String(first.instanceId),
          outcome: 'killed',
          failure_type: 'HostLost',
          destroyed: true,
        },
        {
          rental_key: second.key,
          instance_id: String(second.instanceId),
          outcome: 'killed',
          failure_type: 'HostLost',
          destroyed: true,
        },
      ]);
      for (const r of rows) expect(r.bench_rate).toBeGreaterThanOrEqual(MIN_RATE);
      for (const r of rentals) await expectCompleteEvents(r, ['benchmark', 'promoted', 'killing', 'killed']);
      expect((await benchmarks(id)).map((b) => b.rental_key)).toEqual([first.key, second.key]);
      await expectHostsApart(first, second);
    },
  );

  it('two concurrent deploys of one offer rent it once', { timeout: 180_000 }, async () => {
    const run = promisify(execFile);
    const deploy = () =>
      run(process.execPath, ['--import', 'tsx', 'workers/cli.ts', 'deploy', String(contested.id)], {
        env: { ...process.env, TEMPORAL_ADDRESS: inject('temporalAddress'), CONTROL_TASK_QUEUE: env.taskQueue },
      }).then(
        (r) => ({ code: 0, out: r.stdout, err: r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout, err: e.stderr }),
      );
    const results = await Promise.all([deploy(), deploy()]);
    const id = lifecycleWorkflowId(contested.id);
    const ok = results.filter((r) => r.code === 0);
    const refused = results.filter((r) => r.code !== 0);
    expect(ok, JSON.stringify(results)).toHaveLength(1);
    expect(ok[0]?.out).toMatch(new RegExp(`^started ${id}: offer ${contested.id},`));
    expect(refused).toHaveLength(1);
    expect(refused[0]?.err).toContain(`a lifecycle ${id} for offer ${contested.id} is already running`);

    // The one lifecycle rents; give a second rent every chance to show before ending it.
    await pollUntil(
      'the contested offer rented',
      () => (env.sim.ledger().some((l) => l.offerId === contested.id) ? true : undefined),
      {
        timeoutMs: 60_000,
      },
    );
    await new Promise((r) => setTimeout(r, 2_000));
    await cancelAndWait(env.client, id);
    const rented = env.sim.ledger().filter((l) => l.offerId === contested.id);
    expect(rented).toHaveLength(1);
    expect(rented[0]?.destroyed).toBe(true);
    expect(await instanceRows(id)).toHaveLength(1);
  });
});
