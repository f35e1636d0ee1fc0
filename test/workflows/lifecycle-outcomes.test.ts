import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promoteOverrideUpdate } from '../../workflows/definitions.js';
import { instanceLifecycle, lifecycleStatusQuery } from '../../workflows/index.js';
import { API_KEY, fastRequest, type FleetEnv, METRICS_URL, startFleetEnv } from '../helpers/fleet-env.js';
import { expectKilled } from '../helpers/expect-kill.js';
import { historyText } from '../helpers/history-text.js';
import { simOffer } from '../helpers/offers.js';
import { waitForPromotionRecorded } from '../../infra/dev/verdict.js';
import { expectPromoted } from '../helpers/expect-promoted.js';

// Real proofs/h: a healthy host of two GPUs at 100 s/proof proves ~70/h (its simulator 100x faster).
const MIN_RATE = 29;

// A current host as it prints itself: driver 610's KMD banner and "NVIDIA GeForce RTX 4080 SUPER" for
// what Vast lists as "RTX 4080S" (test/fixtures/nvidia-smi/rtx2080super-610.json, rtx4080super-595.json).
const healthy = simOffer({
  gpu_name: 'RTX 4080S',
  num_gpus: 2,
  gpu_ram: 16_376,
  cuda_max_good: 13.3,
  host: { proofSec: 100, machine: { driverVersion: '610.57.04' } },
});
const slow = simOffer({ gpu_name: 'RTX 3060', num_gpus: 1, host: { proofSec: 600 } });
const cancelled = simOffer({ host: { proofSec: 100 } });
const early = simOffer({ gpu_name: 'RTX 3060', num_gpus: 1, host: { proofSec: 600 } });
const overridden = simOffer({ gpu_name: 'RTX 3060', num_gpus: 1, host: { proofSec: 300 } });

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv([healthy, slow, cancelled, overridden, early]);
});
afterAll(async () => env?.close());

async function expectNothingLeft(offerId: number) {
  const rows = env.sim.ledger().filter((r) => r.offerId === offerId);
  expect(rows.length).toBe(1);
  expect(rows.every((r) => r.destroyed && !r.hostAlive)).toBe(true);
}

describe('instanceLifecycle outcomes', () => {
  it('promotes a healthy host and records it', async () => {
    const id = `promote-${healthy.id}`;
    const handle = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: id,
      args: [fastRequest(healthy.id, { minRate: MIN_RATE })],
      workflowExecutionTimeout: '5 minutes',
    });
    await expectPromoted(env.client, id);
    // Through the fitness gate on what a real driver-610 host prints.
    const fit = await env.pool.query<{ details: Record<string, unknown> }>(
      "SELECT details FROM lifecycle_events WHERE workflow_id = $1 AND message = 'fit'",
      [id],
    );
    expect(fit.rows[0]?.details).toMatchObject({
      measured: {
        gpus: 2,
        gpuNames: ['NVIDIA GeForce RTX 4080 SUPER'],
        smiForm: 'kmd',
        driverVersion: '610.57.04',
        cudaVersion: 13.3,
      },
      claimed: { gpuName: 'RTX 4080S', numGpus: 2 },
    });
    const status = await handle.query(lifecycleStatusQuery);
    expect(status.rate).toBeGreaterThan(MIN_RATE);
    // The stage turns promoted first; the promotion's record (row and Outcome attribute) follows it.
    await waitForPromotionRecorded(env.client, env.pool, id);
    const row = await env.pool.query(
      'SELECT outcome, bench_rate, machine_id, destroyed_at FROM instances WHERE workflow_id = $1',
      [id],
    );
    expect(row.rows[0]).toMatchObject({
      outcome: 'promoted',
      machine_id: String(healthy.machine_id),
      destroyed_at: null,
    });
    const perf = await env.pool.query('SELECT benchmarks, last_rate FROM host_perf WHERE machine_id = $1', [
      healthy.machine_id,
    ]);
    expect(perf.rows[0]?.benchmarks).toBe(1);
    const ledger = env.sim.ledger().find((r) => r.offerId === healthy.id);
    expect(ledger).toMatchObject({ destroyed: false, status: 'running' });
    const desc = await env.client.workflow.getHandle(id).describe();
    expect(desc.searchAttributes.Outcome).toEqual(['promoted']);
    expect(desc.searchAttributes.GpuModel).toEqual(['RTX 4080S']);
    // The Vast key lives only in the worker's config: no input, result or event carries it.
    const history = historyText(await env.client.workflow.getHandle(id).fetchHistory());
    expect(history).toContain('RTX 4080S'); // payloads were decoded
    expect(history).not.toContain(API_KEY);
    // Fleet metrics reach the worker's Prometheus endpoint.
    const metrics = await (await fetch(METRICS_URL)).text();
    expect(metrics).toMatch(/fleet_lifecycle_outcomes_total\{[^}]*outcome="promoted"[^}]*\} 1/);
    expect(metrics).toMatch(/fleet_benchmark_rate_proofs_per_hour_bucket\{[^}]*gpu="RTX 4080S"/);
    // A promoted lifecycle keeps running to watch its host; an operator's kill destroys it.
    await handle.cancel();
    await expect(handle.result()).rejects.toThrow();
    await expectNothingLeft(healthy.id);
  });

  it('stops a hopeless benchmark early, as soon as even the best pace cannot reach minRate', async () => {
    const id = `early-${early.id}`;
    const k = await expectKilled(
      env,
      id,
      fastRequest(early.id, { minRate: MIN_RATE, timeouts: { benchmarkSec: 120, proofDeadlineSec: 60 } }),
      'BenchRateBelowMin',
    );
    expect(k.details.earlyStop).toBe(true);
    expect((k.details.timings as unknown[]).length).toBeLessThan(4);
    expect(k.failure.message).toMatch(/stopped early after \d of 4 proofs/);
    const rows = env.sim.ledger().filter((r) => r.offerId === early.id);
    expect(rows.every((r) => r.destroyed && !r.hostAlive)).toBe(true);
  });

  it('promotes a too-slow host when an operator overrides the verdict', async () => {
    const id = `override-${overridden.id}`;
    const handle = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: id,
      args: [fastRequest(overridden.id, { minRate: MIN_RATE, timeouts: { benchmarkSec: 120, proofDeadlineSec: 60 } })],
      workflowExecutionTimeout: '5 minutes',
    });
    await handle.executeUpdate(promoteOverrideUpdate, {
      args: [{ operator: 'alice', reason: 'only 3090 in the region' }],
    });
    await expectPromoted(env.client, id);
    // As above: the stage turns promoted first, its record follows (on a loaded server, after the query).
    expect(await waitForPromotionRecorded(env.client, env.pool, id)).toMatchObject({
      outcome: 'promoted',
      reason: 'operator override by alice: only 3090 in the region',
    });
    await handle.cancel();
    await expect(handle.result()).rejects.toThrow();
  });

  it('kills a host whose rate is below the minimum, with the rate and timings as evidence', async () => {
    const id = `slow-${slow.id}`;
    const err = await env.client.workflow
      .execute(instanceLifecycle, {
        taskQueue: env.taskQueue,
        workflowId: id,
        // Early stop off: this test is about the full-batch verdict.
        args: [
          fastRequest(slow.id, {
            minRate: MIN_RATE,
            earlyStopAfterProofs: 0,
            timeouts: { benchmarkSec: 120, proofDeadlineSec: 60 },
          }),
        ],
        workflowExecutionTimeout: '4 minutes',
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe('BenchRateBelowMin');
    const details = (cause as ApplicationFailure).details?.[0] as { rate: number; minRate: number; timings: unknown[] };
    expect(details.rate).toBeLessThan(MIN_RATE);
    expect(details.minRate).toBe(MIN_RATE);
    expect(details.timings.length).toBe(4);
    expect((cause as ApplicationFailure).message).toContain('is below the minimum');
    await expectNothingLeft(slow.id);
    const row = await env.pool.query(
      'SELECT outcome, failure_type, destroyed_at FROM instances WHERE workflow_id = $1',
      [id],
    );
    expect(row.rows[0]).toMatchObject({ outcome: 'killed', failure_type: 'BenchRateBelowMin' });
    expect(row.rows[0]?.destroyed_at).not.toBeNull();
    const bad = await env.pool.query('SELECT source FROM bad_machines WHERE machine_id = $1', [slow.machine_id]);
    expect(bad.rows[0]?.source).toBe('rule');
  });

  it('destroys the instance when an operator cancels the lifecycle', async () => {
    const id = `cancel-${cancelled.id}`;
    const handle = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: id,
      args: [fastRequest(cancelled.id, { minRate: MIN_RATE })],
      workflowExecutionTimeout: '3 minutes',
    });
    // Cancel once the host is up and working, the costliest moment to forget an instance.
    for (let i = 0; i < 200; i++) {
      const s = await handle.query(lifecycleStatusQuery);
      if (s.stage === 'warmup' || s.stage === 'paramfetch') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await handle.cancel();
    await expect(handle.result()).rejects.toThrow();
    const desc = await handle.describe();
    expect(desc.status.name).toBe('CANCELLED');
    expect(desc.searchAttributes.FailureType).toEqual(['CancelledByOperator']);
    await expectNothingLeft(cancelled.id);
    const row = await env.pool.query('SELECT outcome, failure_type FROM instances WHERE workflow_id = $1', [id]);
    expect(row.rows[0]).toMatchObject({ outcome: 'killed', failure_type: 'CancelledByOperator' });
  });
});
