import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNATURE_HEADER } from '../../activities/notify/activities.js';
import { expectPromoted } from '../helpers/expect-promoted.js';
import { fleetScaler } from '../../workflows/fleet-scaler.js';
import { instanceLifecycle, orphanReconciler } from '../../workflows/index.js';
import { expectKilled } from '../helpers/expect-kill.js';
import { fleetBase } from '../helpers/fleet-base.js';
import { API_KEY, fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { historyText } from '../helpers/history-text.js';
import { simOffer } from '../helpers/offers.js';
import { pollUntil } from '../../infra/dev/poll.js';
import { startReceiver } from './receiver.js';

// The notify activity itself (signing, retries, refusals) is notify-activity.test.ts.
const SECRET = 'webhook-secret-' + 'x'.repeat(24);

describe('lifecycle notifications through the control worker', () => {
  const SCALE = 0.01;
  const MIN_RATE = 29;
  // CI machines are shared: a stall check of 3 s fails a healthy paramfetch under load.
  const timeouts = { paramfetchStallSec: 15 };
  const healthy = simOffer({ gpu_name: 'RTX 4090', num_gpus: 2, host: { proofSec: 100 } });
  const slow = simOffer({ gpu_name: 'RTX 3060', num_gpus: 1, host: { proofSec: 600 } });
  // Never rented: what the budget refuses.
  const spare = simOffer({ gpu_name: 'RTX 4090', num_gpus: 2, dph_total: 0.9 });
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  let env: FleetEnv;
  beforeAll(async () => {
    rx = await startReceiver();
    env = await startFleetEnv([healthy, slow, spare], {
      security: { NOTIFY_WEBHOOK_URL: rx.url, NOTIFY_WEBHOOK_SECRET: SECRET },
    });
  });
  afterAll(async () => {
    await env?.close();
    await rx?.close().catch(() => undefined);
  });
  const events = () => rx.received.map((r) => JSON.parse(r.body) as { event: Record<string, unknown> });

  it('sends kill, promote and orphan destroyed, signed, with instance, machine, GPU and billed $/h', async () => {
    const killId = `notify-kill-${slow.id}`;
    await expectKilled(env, killId, fastRequest(slow.id, { minRate: MIN_RATE, timeouts }), 'BenchRateBelowMin');
    const kill = events().find((e) => e.event.workflowId === killId);
    expect(kill?.event).toMatchObject({
      kind: 'kill',
      failureType: 'BenchRateBelowMin',
      machineId: slow.machine_id,
      gpu: 'RTX 3060',
    });
    expect(kill?.event.instanceId).toEqual(expect.any(Number));
    expect(kill?.event.dphUsd).toBeGreaterThan(0);

    const promoteId = `notify-promote-${healthy.id}`;
    const handle = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: promoteId,
      args: [fastRequest(healthy.id, { minRate: MIN_RATE, timeouts })],
      workflowExecutionTimeout: '5 minutes',
    });
    await expectPromoted(env.client, promoteId);
    const promote = await pollUntil(
      'promote notification',
      () => events().find((e) => e.event.workflowId === promoteId && e.event.kind === 'promote'),
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(promote.event).toMatchObject({ gpu: 'RTX 4090', machineId: healthy.machine_id });
    expect(rx.received.every((r) => r.headers[SIGNATURE_HEADER] !== undefined)).toBe(true);
    // Neither the webhook's URL nor its secret enters history; nor does the Vast key reach the receiver.
    for (const id of [killId, promoteId]) {
      const text = historyText(await env.client.workflow.getHandle(id).fetchHistory());
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(rx.url);
    }
    expect(rx.received.map((r) => r.body).join('\n')).not.toContain(API_KEY);
    // Terminated, a lifecycle runs no cleanup: the reconciler destroys its instance and says so.
    await handle.terminate('simulating an operator mistake');
    const reconciled = await env.client.workflow.execute(orphanReconciler, {
      taskQueue: env.taskQueue,
      workflowId: `notify-reconcile-${randomUUID()}`,
      args: [],
    });
    expect(reconciled.destroyed.map((d) => d.workflowId)).toContain(promoteId);
    const orphan = events().find((e) => e.event.kind === 'orphan_destroyed');
    expect(orphan?.event).toMatchObject({ workflowId: promoteId, instanceId: reconciled.destroyed[0]?.instanceId });
  });

  it('announces a scaler run the budget holds short of its target', async () => {
    const before = events().length;
    // Shared database and namespace: rentals other files left count into the target and caps, so these
    // leave room above them; only the budget (below any offer's price) may hold the fleet short.
    const base = await fleetBase(env.client, env.pool);
    await env.client.workflow.execute(fleetScaler, {
      taskQueue: env.taskQueue,
      workflowId: `notify-scaler-${randomUUID()}`,
      args: [
        {
          targetRate: base.rate + 1000 / SCALE,
          maxDph: 0.05,
          maxInstances: base.instances + 4,
          maxConcurrentBenchmarks: base.benchmarks + 4,
          explorationSlots: 4,
          minRate: MIN_RATE,
          offerCheckSec: 1,
          filter: { gpuModels: ['RTX 4090'], minRamMb: 0, minReliability: 0, minCuda: 0, maxOfferDph: 5 },
        },
      ],
    });
    const refusal = events()
      .slice(before)
      .find((e) => e.event.kind === 'budget_refusal');
    expect(refusal?.event.reason).toMatch(/would exceed \$0\.05\/h/);
  });
  // A receiver that is down is notify-decisions.test.ts (the lifecycle) and notify-activity.test.ts (the call).
});
