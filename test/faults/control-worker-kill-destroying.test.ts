import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFailed } from 'vitest';
import { createPool } from '../../activities/store/pool.js';
import { startVastSim, type VastSim } from '../../infra/sim/vast/server.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { testControlWorkers, waitForPoller } from '../helpers/control-process.js';
import { expectOneRentEachAndNoneUnowned } from '../helpers/fault-probes.js';
import { API_KEY, fastRequest } from '../helpers/fleet-env.js';
import { hostProcesses } from '../helpers/host-processes.js';
import { simOffer } from '../helpers/offers.js';
import { pollUntil } from '../../infra/dev/poll.js';
import { startVastProxy, type VastProxy } from '../helpers/vast-proxy.js';

/**
 * kill -9 of the control worker while a lifecycle is destroying its instance: the destroy reached Vast
 * and was carried out, but its answer died with the worker. A fresh worker replays the lifecycle and
 * retries the destroy: the instance must be destroyed exactly once and the kill recorded once.
 * A host too slow for the bar (2 proofs per 1000 s = 7.2 real proofs/h against 10).
 */
const slow = simOffer({ host: { proofSec: 1000 } });

let sim: VastSim;
let proxy: VastProxy;
let connection: Connection;
let client: Client;
let pool: pg.Pool;
const taskQueue = `test-faults-control-destroying-${randomUUID()}`;
const workers = testControlWorkers(() => proxy.url, API_KEY, taskQueue);

beforeAll(async () => {
  sim = await startVastSim({ offers: [slow], apiKey: API_KEY });
  proxy = await startVastProxy(sim.url);
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection });
  pool = createPool(inject('databaseUrl'), 2);
});

afterAll(async () => {
  await workers.stopAll();
  await proxy?.close();
  await sim?.close();
  await connection?.close();
  await pool?.end();
});

describe('kill -9 of the control worker while a lifecycle destroys its instance', () => {
  it('destroys the instance exactly once and records the kill once', { timeout: 360_000 }, async () => {
    onTestFailed(() => console.error(workers.outputs()));
    const first = workers.start();
    await waitForPoller(client, taskQueue, first, 90_000);
    const id = `t-fault-ctl-destroying-${slow.id}`;
    // The destroy is carried out at Vast, but the dying worker never hears back.
    proxy.swallowDestroyAnswers = true;
    await client.workflow.start(instanceLifecycle, {
      taskQueue,
      workflowId: id,
      args: [
        fastRequest(slow.id, {
          minRate: 10,
          benchmarkProofs: 6,
          timeouts: { proofDeadlineSec: 60, benchmarkSec: 120 },
        }),
      ],
      workflowExecutionTimeout: '8 minutes',
    });
    await pollUntil('the kill path sends its destroy', () => (proxy.destroys.length > 0 ? true : undefined), {
      timeoutMs: 180_000,
      intervalMs: 50,
    });
    const exit = await first.kill9();
    const killedAt = Date.now();
    expect(exit.signal).toBe('SIGKILL');
    const inst = sim.ledger().find((r) => r.offerId === slow.id);
    expect(inst?.destroyed, 'the destroy reached Vast before the kill').toBe(true);
    const destroyedAt = inst?.destroyedAt ?? 0;

    proxy.swallowDestroyAnswers = false;
    const second = workers.start();
    await waitForPoller(client, taskQueue, second, 90_000);
    // The destroy activity died with the worker: its start-to-close (1 min) ends it and it is retried.
    const err = await client.workflow
      .getHandle(id)
      .result()
      .then(
        () => new Error('expected the lifecycle to end killed'),
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe('BenchRateBelowMin');
    expect(killedAt - destroyedAt).toBeGreaterThanOrEqual(0);

    // Destroyed exactly once: one destroy carried out; the retry found it gone (404), nothing else.
    expect(proxy.destroys.filter((d) => d.status === 200).length, 'destroys carried out').toBe(1);
    expect(proxy.destroys.filter((d) => d.status !== 200 && d.status !== 404)).toEqual([]);
    const after = sim.ledger().filter((r) => r.offerId === slow.id);
    expect(after.length).toBe(1);
    expect(after[0]?.destroyedAt).toBe(destroyedAt);
    await expectOneRentEachAndNoneUnowned(client, sim, [id]);

    // Recorded once: one outcome, one killing and one killed event, one count against the machine.
    const row = await pool.query<{ outcome: string; failure_type: string; destroyed: boolean }>(
      'SELECT outcome, failure_type, destroyed_at IS NOT NULL AS destroyed FROM instances WHERE workflow_id = $1',
      [id],
    );
    expect(row.rows).toEqual([{ outcome: 'killed', failure_type: 'BenchRateBelowMin', destroyed: true }]);
    const events = await pool.query<{ stage: string; n: number }>(
      `SELECT stage, count(*)::int AS n FROM lifecycle_events
        WHERE workflow_id = $1 AND stage IN ('killing', 'killed') GROUP BY stage ORDER BY stage`,
      [id],
    );
    expect(events.rows).toEqual([
      { stage: 'killed', n: 1 },
      { stage: 'killing', n: 1 },
    ]);
    const failures = await pool.query<{ failure_type: string; count: number }>(
      'SELECT failure_type, count::int AS count FROM machine_failures WHERE machine_id = $1',
      [slow.machine_id],
    );
    expect(failures.rows).toEqual([{ failure_type: 'BenchRateBelowMin', count: 1 }]);
    await pollUntil(
      `host processes of instance ${after[0]?.id} gone`,
      () => (hostProcesses(after[0]?.id ?? 0).length === 0 ? true : undefined),
      { timeoutMs: 10_000 },
    );
  });
});
