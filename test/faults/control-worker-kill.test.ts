import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFailed } from 'vitest';
import { createPool } from '../../activities/store/pool.js';
import { startVastSim, type VastSim } from '../../infra/sim/vast/server.js';
import { waitForPromotionRecorded } from '../../infra/dev/verdict.js';
import { expectPromoted } from '../helpers/expect-promoted.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { cancelAndWait } from '../helpers/cancel-and-wait.js';
import { testControlWorkers, waitForPoller } from '../helpers/control-process.js';
import {
  activityCompletedAt,
  expectOneRentEachAndNoneUnowned,
  faultSeed,
  seededInt,
  waitForBenchmarkRunning,
  workflowTaskWorkersSince,
} from '../helpers/fault-probes.js';
import { API_KEY, fastRequest } from '../helpers/fleet-env.js';
import { hostProcesses } from '../helpers/host-processes.js';
import { simOffer } from '../helpers/offers.js';
import { pollUntil } from '../../infra/dev/poll.js';

// Healthy hosts with a batch long enough (8 proofs, 2 at a time, 4 s each at SIM_TIME_SCALE=0.01) to kill inside it.
const offers = [simOffer({ host: { proofSec: 400 } }), simOffer({ host: { proofSec: 400 } })];
const PROOFS = 8;
const seed = faultSeed();
// Which proof of the batch the kill follows, per seed: repeatable, and different seeds probe other points.
const killAfterProofs = seededInt(seed, 'control-kill', 0, 2);

let sim: VastSim;
let connection: Connection;
let client: Client;
let pool: pg.Pool;
const taskQueue = `test-faults-control-${randomUUID()}`;
const workers = testControlWorkers(() => sim.url, API_KEY, taskQueue);

beforeAll(async () => {
  sim = await startVastSim({ offers, apiKey: API_KEY });
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection });
  pool = createPool(inject('databaseUrl'), 2);
});

afterAll(async () => {
  await workers.stopAll();
  await sim?.close();
  await connection?.close();
  await pool?.end();
});

describe(`kill -9 of the control worker (seed ${seed})`, () => {
  it(
    `mid-benchmark (after ${killAfterProofs} proofs): a fresh worker replays and finishes every lifecycle, one rent each`,
    { timeout: 240_000 },
    async () => {
      onTestFailed(() => console.error(workers.outputs()));
      const first = workers.start();
      // Bundling the workflow code takes a while on a busy 2-core machine.
      await waitForPoller(client, taskQueue, first, 90_000);
      const ids = offers.map((o) => `t-fault-ctl-${o.id}`);
      for (const [i, o] of offers.entries()) {
        await client.workflow.start(instanceLifecycle, {
          taskQueue,
          workflowId: ids[i] ?? '',
          args: [fastRequest(o.id, { benchmarkProofs: PROOFS, timeouts: { benchmarkSec: 90 } })],
          workflowExecutionTimeout: '5 minutes',
        });
      }
      for (const id of ids) {
        const at = await waitForBenchmarkRunning(client, id, 90_000, killAfterProofs);
        expect(at.live.stage).toBe('benchmark');
      }

      const killedAt = Date.now();
      const exit = await first.kill9();
      expect(exit.signal).toBe('SIGKILL');
      // Both batches were still running on their hosts when the control worker died.
      for (const id of ids) expect(await activityCompletedAt(client, id, 'runBenchmark')).toBeNull();

      const second = workers.start();
      expect(second.pid).not.toBe(first.pid);
      await waitForPoller(client, taskQueue, second, 90_000);

      for (const id of ids) {
        // Healthy hosts: losing the control worker must not change the verdict.
        await expectPromoted(client, id, 90_000);
        // The 'promoted' event and the outcome are written just after the stage turns promoted.
        expect((await waitForPromotionRecorded(client, pool, id)).outcome).toBe('promoted');
        const benchDone = await activityCompletedAt(client, id, 'runBenchmark');
        expect(benchDone?.getTime()).toBeGreaterThan(killedAt);
        // Everything after the kill was decided by the new process, replaying the history.
        expect([...(await workflowTaskWorkersSince(client, id, killedAt))]).toEqual([second.identity]);
        // Replay re-ran no side effect: each event (a stage entered, a note in it) was recorded once.
        const events = await pool.query<{ stage: string; message: string; n: number }>(
          `SELECT stage, message, count(*)::int AS n FROM lifecycle_events WHERE workflow_id = $1
            GROUP BY stage, message`,
          [id],
        );
        expect(events.rows.filter((r) => r.n !== 1)).toEqual([]);
        expect(events.rows.map((r) => r.stage)).toContain('promoted');
      }
      await expectOneRentEachAndNoneUnowned(client, sim, ids);

      // Promoted lifecycles are cancelled by the test: each must then destroy its instance.
      for (const id of ids) await cancelAndWait(client, id);
      await expectOneRentEachAndNoneUnowned(client, sim, ids);
      for (const r of sim.ledger()) {
        expect(r.destroyed, `instance ${r.id} destroyed`).toBe(true);
        await pollUntil(
          `host processes of instance ${r.id} gone`,
          () => (hostProcesses(r.id).length === 0 ? true : undefined),
          {
            timeoutMs: 10_000,
          },
        );
      }
      const rows = await pool.query<{ workflow_id: string; outcome: string; failure_type: string | null }>(
        'SELECT workflow_id, outcome, failure_type FROM instances WHERE workflow_id = ANY($1) ORDER BY workflow_id',
        [ids],
      );
      expect(rows.rows.map((r) => [r.outcome, r.failure_type])).toEqual(
        ids.map(() => ['killed', 'CancelledByOperator']),
      );
    },
  );
});
