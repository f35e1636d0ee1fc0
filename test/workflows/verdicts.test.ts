import { WorkflowFailedError } from '@temporalio/client';
import type { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markBad } from '../../activities/store/queries.js';
import { lifecycleStatusQuery } from '../../workflows/definitions.js';
import { FailureType } from '../../workflows/domain/failures.js';
import { fleetScaler, instanceLifecycle } from '../../workflows/index.js';
import { lifecycleWorkflowId } from '../../workflows/domain/task-queues.js';
import type { LifecycleRequest, LifecycleStatus } from '../../workflows/domain/types.js';
import type { SimOffer } from '../../infra/sim/scenario.js';
import { cancelAndWait, cancelStillRunning } from '../helpers/cancel-and-wait.js';
import { fastRequest, type FleetEnv, startFleetEnv, simClock } from '../helpers/fleet-env.js';
import { simOffer } from '../helpers/offers.js';
import { pollUntil } from '../../infra/dev/poll.js';
import { waitForPromotionRecorded } from '../../infra/dev/verdict.js';

// 29 proofs/h in real time; SIM_TIME_SCALE=0.01 makes a 100 s proof take 1 s, so rates are 100x.
const MIN_RATE = 29;
const PROOFS = 8;
// Healthy hosts: 2x GPU, 251 GB (2 at a time), 100 s a proof: 72 proofs/h, well above 29. An early
// promotion itself is proven by the host's step (test/activities/early-promote-activity.test.ts) and the
// lifecycle's use of its evidence (test/logic/verdicts.test.ts).
// GPU models of their own, so each scaler run below finds its offer only.
const retried = simOffer({ gpu_name: `VERDICT-RETRY-${Date.now()}`, host: { proofSec: 100 } });
const probation = simOffer({ gpu_name: `VERDICT-PROBATION-${Date.now()}`, host: { proofSec: 100 } });

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv([retried, probation]);
});
afterAll(async () => {
  // Also when a test failed midway: a lifecycle left running would count in later files' scaler caps.
  if (env)
    await cancelStillRunning(
      env.client,
      [retried, probation].map((o) => lifecycleWorkflowId(o.id)),
    );
  await env?.close();
});

// The machine is shared with other test runs: a generous stall limit keeps a slow paramfetch from ending it.
const TIMEOUTS = { ...fastRequest(0).timeouts, paramfetchStallSec: 15, paramfetchSec: 60, daemonReadySec: 40 };
const request = (o: SimOffer, over: Partial<LifecycleRequest> = {}) =>
  fastRequest(o.id, {
    minRate: MIN_RATE,
    benchmarkProofs: PROOFS,
    watch: { intervalSec: 1 },
    timeouts: TIMEOUTS,
    verdicts: { earlyPromote: true },
    ...over,
  });

const status = (o: SimOffer): Promise<LifecycleStatus> =>
  env.client.workflow.getHandle(lifecycleWorkflowId(o.id)).query(lifecycleStatusQuery);

async function stageReached(o: SimOffer, stage: LifecycleStatus['stage']): Promise<LifecycleStatus> {
  return pollUntil(`${o.id} at ${stage}`, async () => ((await status(o)).stage === stage ? status(o) : undefined), {
    timeoutMs: 90_000,
    intervalMs: 250,
  });
}

/**
 * Promoted, and the promotion recorded: the status turns promoted before the row's outcome, verdict and
 * reason (and the probation pass, in the same transaction) are written, and before the 'promoted' event.
 */
async function promotionRecorded(o: SimOffer) {
  await stageReached(o, 'promoted');
  return waitForPromotionRecorded(env.client, env.pool, lifecycleWorkflowId(o.id));
}

/** One scaler run that wants one more host, of this offer's GPU model only. */
async function scale(o: SimOffer) {
  const promoted = await env.pool.query<{ rate: number }>(
    `SELECT COALESCE(SUM(bench_rate), 0)::float AS rate FROM instances WHERE destroyed_at IS NULL AND outcome = 'promoted'`,
  );
  return env.client.workflow.execute(fleetScaler, {
    taskQueue: env.taskQueue,
    workflowId: `scaler-verdicts-${o.id}-${Date.now()}`,
    args: [
      {
        targetRate: (promoted.rows[0]?.rate ?? 0) + 1,
        maxDph: 1000,
        maxInstances: 1000,
        maxConcurrentBenchmarks: 1000,
        explorationSlots: 1,
        minRate: MIN_RATE,
        offerCheckSec: 2,
        filter: { gpuModels: [o.gpu_name], minRamMb: 64_000, minReliability: 0.9, minCuda: 12, maxOfferDph: 3 },
        lifecycle: { benchmarkProofs: PROOFS, timeouts: TIMEOUTS, clock: simClock(), watch: { intervalSec: 1 } },
      },
    ],
    workflowExecutionTimeout: '2 minutes',
  });
}

const latest = async (o: SimOffer) =>
  (
    await env.pool.query<{ rental_key: string; reason: string; verdict: string; outcome: string }>(
      `SELECT rental_key, reason, verdict, outcome FROM instances WHERE offer_id = $1 ORDER BY created_at DESC LIMIT 1`,
      [o.id],
    )
  ).rows[0];

const benchmarkOf = async (rentalKey: string) =>
  (
    await env.pool.query<{ completed: number; requested: number; elapsed_ms: string }>(
      'SELECT completed, requested, elapsed_ms FROM benchmark_results WHERE rental_key = $1',
      [rentalKey],
    )
  ).rows[0];

const eventDetails = async (rentalKey: string, stage: string) =>
  (
    await env.pool.query<{ details: Record<string, unknown> }>(
      'SELECT details FROM lifecycle_events WHERE rental_key = $1 AND stage = $2 ORDER BY seq LIMIT 1',
      [rentalKey, stage],
    )
  ).rows[0]?.details;

const marked = async (o: SimOffer) =>
  (await env.pool.query('SELECT 1 FROM bad_machines WHERE machine_id = $1', [o.machine_id])).rowCount === 1;

describe('verdicts end to end', () => {
  it(
    'an inconclusive end marks nothing; the scaler rents the offer again and it is promoted; then it rests',
    { timeout: 300_000 },
    async () => {
      const handle = await env.client.workflow.start(instanceLifecycle, {
        taskQueue: env.taskQueue,
        workflowId: lifecycleWorkflowId(retried.id),
        args: [request(retried)],
        workflowExecutionTimeout: '5 minutes',
      });
      // The host vanishes mid-benchmark (a preempted machine): not evidence that it is a bad one.
      const { instanceId } = await stageReached(retried, 'benchmark');
      const res = await fetch(`${env.sim.url}/_sim/instances/${instanceId}/preempt`, { method: 'POST' });
      expect(res.ok).toBe(true);
      const err = await handle.result().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(WorkflowFailedError);
      const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
      expect(cause.type).toBe(FailureType.HostLost);
      expect(cause.details?.[0]).toMatchObject({ verdict: 'inconclusive' });
      expect(await latest(retried)).toMatchObject({ verdict: 'inconclusive', outcome: 'killed' });
      expect(await marked(retried)).toBe(false);

      const again = await scale(retried);
      expect(again.started.map((s) => s.offerId)).toEqual([retried.id]);
      await promotionRecorded(retried);
      expect(await latest(retried)).toMatchObject({ verdict: 'promote' });
      const rentals = env.sim.ledger().filter((r) => r.offerId === retried.id);
      expect(rentals).toHaveLength(2);

      // An operator's cancel is inconclusive too (ours): the machine now rests, so the retries are bounded.
      await cancelAndWait(env.client, lifecycleWorkflowId(retried.id));
      const resting = await scale(retried);
      expect(resting.started).toEqual([]);
      expect(resting.restingMachines).toContain(retried.machine_id);
    },
  );

  it(
    'a transient mark expires; the machine comes back on probation, proves its whole batch and passes',
    { timeout: 240_000 },
    async () => {
      await markBad(env.pool, probation.machine_id, 'HostLost x2: preempted twice (test)', 'rule', 4);
      expect((await scale(probation)).started).toEqual([]);
      await pollUntil(
        'the mark to expire',
        async () =>
          (
            await env.pool.query('SELECT 1 FROM bad_machines WHERE machine_id = $1 AND expires_at <= now()', [
              probation.machine_id,
            ])
          ).rowCount === 1
            ? true
            : undefined,
        { timeoutMs: 20_000 },
      );
      const run = await scale(probation);
      expect(run.started.map((s) => s.offerId)).toEqual([probation.id]);
      const benchmarking = await stageReached(probation, 'benchmark');
      expect(benchmarking.probation).toBe(true);
      await promotionRecorded(probation);
      const row = await latest(probation);
      expect(row).toMatchObject({ verdict: 'promote' });
      expect(row?.reason).not.toMatch(/early/);
      expect(await benchmarkOf(row!.rental_key)).toMatchObject({ completed: PROOFS, requested: PROOFS });
      expect(await eventDetails(row!.rental_key, 'benchmark')).toMatchObject({ probation: true });
      // Passed: the expired mark is gone, so its next transient failure starts from one again.
      expect(await marked(probation)).toBe(false);
      await cancelAndWait(env.client, lifecycleWorkflowId(probation.id));
    },
  );

  it('leaves no instance running', () => {
    const rows = env.sim.ledger().filter((r) => [retried.id, probation.id].includes(r.offerId));
    expect(rows.every((r) => r.destroyed)).toBe(true);
  });
});
