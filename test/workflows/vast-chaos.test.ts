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

describe('Vast API timeouts', () => {
  const slowOffer = simOffer({ host: { proofSec: 100 } });
  let tenv: FleetEnv;
  beforeAll(async () => {
    // Calls the client gives up on after 1.5 s; half of them were carried out at Vast first, so a
    // retried create must find the instance it already made (by label) instead of renting again.
    tenv = await startFleetEnv([slowOffer], { security: { VAST_REQUEST_TIMEOUT_MS: 1500 } });
    await fetch(`${tenv.sim.url}/_sim/chaos`, {
      method: 'POST',
      body: JSON.stringify({ rate429: 0, rate5xx: 0, rateTimeout: 0.25, loseCreateAnswers: 1, seed: 20261203 }),
    });
  });
  afterAll(async () => tenv?.close());

  it('abandons unanswered calls, retries within bounds, and never rents twice', async () => {
    const id = `chaos-timeout-${slowOffer.id}`;
    const handle = await tenv.client.workflow.start(instanceLifecycle, {
      taskQueue: tenv.taskQueue,
      workflowId: id,
      args: [fastRequest(slowOffer.id, { minRate: 29 / 0.01, timeouts: { waitRunningSec: 60 } })],
      workflowExecutionTimeout: '5 minutes',
    });
    expect(await waitForVerdict(tenv.client, id)).toBe('promoted');
    const stats = (await (await fetch(`${tenv.sim.url}/_sim/stats`)).json()) as {
      injectedTimeouts: number;
      lostCreateAnswers: number;
    };
    expect(stats.injectedTimeouts).toBeGreaterThan(0);
    // Vast carried out a create whose answer never arrived: the retry must adopt that instance.
    expect(stats.lostCreateAnswers).toBeGreaterThan(0);
    expect(tenv.sim.ledger().filter((r) => r.offerId === slowOffer.id)).toHaveLength(1);
    const history = await tenv.client.workflow.getHandle(id).fetchHistory();
    for (const e of history.events ?? []) {
      expect(e.activityTaskStartedEventAttributes?.attempt ?? 1).toBeLessThanOrEqual(8);
    }
    await cancelAndWait(tenv.client, handle.workflowId);
    expect(tenv.sim.ledger().every((r) => r.destroyed)).toBe(true);
  });
});
