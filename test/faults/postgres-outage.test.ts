import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderStatus } from '../../workers/cli/commands/lifecycle.js';
import { statusView } from '../../workers/cli/status.js';
import { expectPromoted } from '../helpers/expect-promoted.js';
import { lifecycleStatusQuery } from '../../workflows/definitions.js';
import { instanceLifecycle } from '../../workflows/index.js';
import type { LifecycleRequest, LifecycleStatus } from '../../workflows/domain/types.js';
import { cancelAndWait } from '../helpers/cancel-and-wait.js';
import { expectCleanedUp, expectKilled } from '../helpers/expect-kill.js';
import { expectOneRentEachAndNoneUnowned, waitForBenchmarkRunning } from '../helpers/fault-probes.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { simOffer } from '../helpers/offers.js';
import { pollUntil } from '../../infra/dev/poll.js';
import { historyText } from '../helpers/history-text.js';
import { recordHistory } from '../helpers/record-history.js';
import { type PrivatePostgres, startPrivatePostgres } from '../helpers/private-postgres.js';

/**
 * Our own Postgres stopped for twenty-five times a store write's retry budget while lifecycles are mid-benchmark,
 * promoted, and in their kill path. Postgres is a record: nothing may be killed for it, no verdict, kill or
 * destroy may wait for it, and when it returns every record catches up once. What matters is the outage
 * against the retry budget (and the batches ending inside it), not their absolute lengths.
 * SIM_TIME_SCALE=0.01: a 400 s proof is 4 s.
 */
const STORE_RETRY_SEC = 2;
const OUTAGE_MS = 50_000;
// Real proofs/h: healthy 2 per 400 s = 18/h; slow 2 per 1000 s = 7.2/h (4 s and 10 s of wall time at 100x).
const MIN_RATE = 10;

const healthy = simOffer({ host: { proofSec: 400 } });
const slow = simOffer({ host: { proofSec: 1000 } });
const cancelled = simOffer({ host: { proofSec: 400 } });
const promoted = simOffer({ host: { proofSec: 100 } });

function request(offerId: number, over: Partial<LifecycleRequest> = {}): LifecycleRequest {
  return fastRequest(offerId, {
    minRate: MIN_RATE,
    // The slow host must be judged on its full batch, after the outage began.
    earlyStopAfterProofs: 0,
    ...over,
    timeouts: { benchmarkSec: 120, proofDeadlineSec: 60, storeRetrySec: STORE_RETRY_SEC, ...over.timeouts },
  });
}

let pgPrivate: PrivatePostgres;
let env: FleetEnv;
beforeAll(async () => {
  pgPrivate = await startPrivatePostgres();
  env = await startFleetEnv([healthy, slow, cancelled, promoted], { databaseUrl: pgPrivate.url });
});
afterAll(async () => {
  // A failed run may leave Postgres down: bring it back so the lifecycles' waiting writes let the worker stop.
  await pgPrivate?.start().catch(() => undefined);
  await env?.close();
  await pgPrivate?.destroy();
});

/** The status query, timed: it must answer while store writes wait. */
async function timedStatus(id: string): Promise<{ status: LifecycleStatus; ms: number }> {
  const t0 = Date.now();
  const status = await env.client.workflow.getHandle(id).query(lifecycleStatusQuery);
  return { status, ms: Date.now() - t0 };
}

describe('a Postgres outage longer than the store retry budget', () => {
  it(
    'kills no healthy host, destroys without the store, and every record catches up once',
    { timeout: 360_000 },
    async () => {
      const ids = {
        healthy: `t-pg-healthy-${healthy.id}`,
        slow: `t-pg-slow-${slow.id}`,
        cancelled: `t-pg-cancelled-${cancelled.id}`,
        promoted: `t-pg-promoted-${promoted.id}`,
      };
      const start = (id: string, req: LifecycleRequest) =>
        env.client.workflow.start(instanceLifecycle, {
          taskQueue: env.taskQueue,
          workflowId: id,
          args: [req],
          workflowExecutionTimeout: '10 minutes',
        });
      await start(ids.promoted, request(promoted.id, { benchmarkProofs: 4, watch: { intervalSec: 2 } }));
      await expectPromoted(env.client, ids.promoted, 120_000);
      // The promoted row is written before the outage; only the watch runs through it.
      await pollUntil(
        'promoted outcome recorded',
        async () =>
          (
            await env.pool.query(`SELECT 1 FROM instances WHERE workflow_id = $1 AND outcome = 'promoted'`, [
              ids.promoted,
            ])
          ).rowCount === 1 || undefined,
        { timeoutMs: 20_000 },
      );
      // The slow host reaches its batch ~20 s after the others (slower warmups): Postgres stops before it
      // does, so the read its batch needs (the machine's standing) meets the outage. Every batch ends inside
      // the outage (healthy 12 x 4 s / 2 = 24 s; slow 2 x 10 s at once = 10 s).
      await start(ids.healthy, request(healthy.id, { benchmarkProofs: 12 }));
      await start(ids.slow, request(slow.id, { benchmarkProofs: 2, verdicts: { earlyPromote: true } }));
      await start(ids.cancelled, request(cancelled.id, { benchmarkProofs: 24 }));
      await Promise.all([ids.healthy, ids.cancelled].map((id) => waitForBenchmarkRunning(env.client, id, 120_000)));
      const slowBefore = (await timedStatus(ids.slow)).status.stage;
      expect(['benchmark', 'evaluating', 'promoted', 'killing', 'killed'], 'slow host still warming up').not.toContain(
        slowBefore,
      );

      await pgPrivate.stop();
      const stoppedAt = Date.now();

      // In the kill path while Postgres is down: the destroy does not wait for the store.
      const cancelledHandle = env.client.workflow.getHandle(ids.cancelled);
      await cancelledHandle.cancel();
      await pollUntil(
        'the cancelled lifecycle destroys its instance during the outage',
        () => (env.sim.ledger().find((r) => r.offerId === cancelled.id)?.destroyed ? true : undefined),
        { timeoutMs: 40_000, intervalMs: 250 },
      );
      expect(Date.now() - stoppedAt, 'destroyed while Postgres was still down').toBeLessThan(OUTAGE_MS);

      // The slow host's batch ends inside the outage: judged and destroyed at once, its records waiting.
      await pollUntil(
        'the slow host judged and destroyed during the outage',
        () => (env.sim.ledger().find((r) => r.offerId === slow.id)?.destroyed ? true : undefined),
        { timeoutMs: OUTAGE_MS, intervalMs: 250 },
      );
      expect(Date.now() - stoppedAt, 'the slow host destroyed while Postgres was still down').toBeLessThan(OUTAGE_MS);
      expect((await timedStatus(ids.slow)).status.failureType).toBe('BenchRateBelowMin');

      // The batches end during the outage; their records wait, and the status says what they wait on.
      const slowest: number[] = [];
      for (const id of [ids.healthy, ids.slow]) {
        const waiting = await pollUntil(
          `${id} waiting on the store`,
          async () => {
            const { status, ms } = await timedStatus(id);
            slowest.push(ms);
            return status.waitingOn?.what === 'store' ? status : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 500 },
        );
        expect(waiting.failureType).toBe(id === ids.slow ? 'BenchRateBelowMin' : null);
        expect(waiting.waitingOn?.lastError).toMatch(/ECONNREFUSED|connect/);
        // What an operator reads: the CLI's status names the wait and that it is our database.
        expect(renderStatus(await statusView(env.client, id))).toMatch(/waiting +on our database since .*ECONNREFUSED/);
        const desc = await env.client.workflow.getHandle(id).describe();
        expect(desc.status.name).toBe('RUNNING');
      }
      // The outage lasts past several retry budgets; the status keeps answering meanwhile.
      while (Date.now() - stoppedAt < OUTAGE_MS) {
        for (const id of [ids.healthy, ids.slow, ids.cancelled]) slowest.push((await timedStatus(id)).ms);
        await new Promise((r) => setTimeout(r, 2000));
      }
      expect(Math.max(...slowest), 'slowest status query during the outage (ms)').toBeLessThan(
        STORE_RETRY_SEC * 1000 + 2000,
      );
      const healthyNow = (await timedStatus(ids.healthy)).status;
      expect(healthyNow.waitingOn?.what).toBe('store');
      // Its verdict did not wait for the store: promoted during the outage, its records still waiting.
      expect(healthyNow.stage).toBe('promoted');
      expect((await env.client.workflow.getHandle(ids.promoted).describe()).status.name).toBe('RUNNING');
      await pgPrivate.start();

      // Healthy hosts: promoted, as without the outage (the healthy one during it: its verdict did not wait).
      // Failing hosts: killed for their own fault, marked.
      await expectPromoted(env.client, ids.healthy, 90_000);
      const slowKill = await expectKilled(env, ids.slow, 'already-started', 'BenchRateBelowMin');
      expect(slowKill.failure.message).toMatch(/below the minimum/);
      await expect(cancelledHandle.result()).rejects.toThrow();
      await pollUntil(
        'every record caught up',
        async () => {
          const r = await env.pool.query<{ workflow_id: string; outcome: string | null }>(
            'SELECT workflow_id, outcome FROM instances WHERE workflow_id = ANY($1)',
            [Object.values(ids)],
          );
          return r.rows.length === 4 && r.rows.every((x) => x.outcome !== null) ? r.rows : undefined;
        },
        { timeoutMs: 60_000 },
      );
      const rows = await env.pool.query<{
        workflow_id: string;
        outcome: string;
        failure_type: string | null;
        destroyed: boolean;
      }>(
        'SELECT workflow_id, outcome, failure_type, destroyed_at IS NOT NULL AS destroyed FROM instances WHERE workflow_id = ANY($1)',
        [Object.values(ids)],
      );
      const byId = Object.fromEntries(rows.rows.map((r) => [r.workflow_id, r]));
      expect(byId[ids.healthy]).toMatchObject({ outcome: 'promoted', failure_type: null });
      expect(byId[ids.promoted]).toMatchObject({ outcome: 'promoted', failure_type: null });
      expect(byId[ids.slow]).toMatchObject({ outcome: 'killed', failure_type: 'BenchRateBelowMin', destroyed: true });
      expect(byId[ids.cancelled]).toMatchObject({
        outcome: 'killed',
        failure_type: 'CancelledByOperator',
        destroyed: true,
      });
      // Nothing doubled: each stage of each lifecycle recorded once, and each benchmark once.
      const events = await env.pool.query<{ workflow_id: string; stage: string; n: number }>(
        `SELECT workflow_id, stage, count(*)::int AS n FROM lifecycle_events
          WHERE workflow_id = ANY($1) AND message LIKE 'entered %' GROUP BY workflow_id, stage`,
        [Object.values(ids)],
      );
      expect(events.rows.filter((r) => r.n !== 1)).toEqual([]);
      const stagesOf = (id: string) => events.rows.filter((r) => r.workflow_id === id).map((r) => r.stage);
      expect(stagesOf(ids.healthy)).toEqual(expect.arrayContaining(['benchmark', 'evaluating', 'promoted']));
      expect(stagesOf(ids.slow)).toEqual(expect.arrayContaining(['benchmark', 'evaluating', 'killing', 'killed']));
      expect(stagesOf(ids.cancelled)).toEqual(expect.arrayContaining(['benchmark', 'killing', 'killed']));
      // The store never counts against a machine; the slow host keeps the mark it earned.
      const machine = (o: typeof healthy) => o.machine_id;
      const failures = await env.pool.query<{ machine_id: string; failure_type: string }>(
        'SELECT machine_id::text, failure_type FROM machine_failures WHERE machine_id = ANY($1)',
        [[healthy, slow, cancelled, promoted].map(machine)],
      );
      expect(failures.rows).toEqual([{ machine_id: String(slow.machine_id), failure_type: 'BenchRateBelowMin' }]);
      expect(await env.pool.query('SELECT 1 FROM bad_machines WHERE machine_id = $1', [slow.machine_id])).toMatchObject(
        { rowCount: 1 },
      );
      for (const id of Object.values(ids)) {
        const sa = (await env.client.workflow.getHandle(id).describe()).searchAttributes;
        expect(sa.FailureType ?? [], `${id} failure type`).not.toContain('Internal');
      }
      const benchmarks = await env.pool.query<{ workflow_id: string }>(
        'SELECT workflow_id FROM benchmark_results WHERE workflow_id = ANY($1)',
        [[ids.healthy, ids.slow]],
      );
      expect(benchmarks.rows.map((r) => r.workflow_id).sort()).toEqual([ids.healthy, ids.slow].sort());

      await expectOneRentEachAndNoneUnowned(env.client, env.sim, Object.values(ids));
      for (const id of [ids.healthy, ids.promoted]) await cancelAndWait(env.client, id);
      for (const o of [healthy, slow, cancelled, promoted]) expectCleanedUp(env, o.id);
      // The standing read got one store round, then the conservative choice: a full batch, no early
      // promote, with why in history (the read's failed marker and the benchmark event's details).
      const slowHistory = historyText(await env.client.workflow.getHandle(ids.slow).fetchHistory());
      expect(slowHistory).toMatch(/standingUnread/);
      expect(slowHistory).toMatch(/full batch, no early promote/);
      await recordHistory(env.client, ids.cancelled, `killed-CancelledByOperator-store-outage-${cancelled.id}`);
      await recordHistory(env.client, ids.slow, `killed-BenchRateBelowMin-store-outage-${slow.id}`);
    },
  );
});
