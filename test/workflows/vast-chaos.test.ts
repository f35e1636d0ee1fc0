import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceLifecycle } from '../../workflows/index.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { cancelAndWait } from '../helpers/cancel-and-wait.js';
import { simOffer } from '../helpers/offers.js';
import { waitForVerdict } from '../../workers/cli/verdict.js';

const offer = simOffer({ host: { proofSec: 100 } });
let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv([offer]);
  // A third of all Vast calls answer 429 or 503 (seeded, so the run repeats exactly): the lifecycle
  // must ride through on bounded retries.
  await fetch(`${env.sim.url}/_sim/chaos`, {
    method: 'POST',
    body: JSON.stringify({ rate429: 0.2, rate5xx: 0.13, seed: 20261202 }),
  });
});
afterAll(async () => env?.close());

describe('Vast API chaos', () => {
  it('retries 429/5xx with backoff, rents exactly one instance, and still decides', async () => {
    const id = `chaos-${offer.id}`;
    const handle = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: id,
      args: [fastRequest(offer.id, { minRate: 29 / 0.01, timeouts: { waitRunningSec: 60 } })],
      workflowExecutionTimeout: '5 minutes',
    });
    expect(await waitForVerdict(env.client, id)).toBe('promoted');
    expect(env.sim.ledger().filter((r) => r.offerId === offer.id)).toHaveLength(1);
    const stats = (await (await fetch(`${env.sim.url}/_sim/stats`)).json()) as {
      injected429: number;
      injected5xx: number;
    };
    expect(stats.injected429 + stats.injected5xx).toBeGreaterThan(0);
    const history = await env.client.workflow.getHandle(id).fetchHistory();
    const failedAttempts = (history.events ?? []).filter(
      (e) => e.activityTaskStartedEventAttributes?.attempt && e.activityTaskStartedEventAttributes.attempt > 1,
    );
    // Retries are visible in history as later attempts, never unbounded.
    for (const e of failedAttempts) expect(e.activityTaskStartedEventAttributes?.attempt).toBeLessThanOrEqual(8);
    await cancelAndWait(env.client, handle.workflowId);
  });
});
