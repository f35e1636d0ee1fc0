import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Chaos } from '../../infra/sim/vast/server.js';
import type { SimOffer } from '../../infra/sim/scenario.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { cancelAndWait } from '../helpers/cancel-and-wait.js';
import { simOffer } from '../helpers/offers.js';
import { waitForVerdict } from '../../workers/cli/verdict.js';

async function injectChaos(env: FleetEnv, chaos: Chaos): Promise<void> {
  await fetch(`${env.sim.url}/_sim/chaos`, { method: 'POST', body: JSON.stringify(chaos) });
}

async function simStats<K extends string>(env: FleetEnv): Promise<Record<K, number>> {
  return (await (await fetch(`${env.sim.url}/_sim/stats`)).json()) as Record<K, number>;
}

/**
 * Runs a healthy lifecycle through the chaos to promotion, checks it rented exactly one instance and
 * that every activity retry stayed within its bounded attempts, then cancels it (destroying the host).
 */
async function expectPromotedThroughChaos(env: FleetEnv, offer: SimOffer, id: string): Promise<void> {
  const handle = await env.client.workflow.start(instanceLifecycle, {
    taskQueue: env.taskQueue,
    workflowId: id,
    args: [fastRequest(offer.id, { minRate: 29 / 0.01, timeouts: { waitRunningSec: 60 } })],
    workflowExecutionTimeout: '5 minutes',
  });
  expect(await waitForVerdict(env.client, id)).toBe('promoted');
  expect(env.sim.ledger().filter((r) => r.offerId === offer.id)).toHaveLength(1);
  const history = await env.client.workflow.getHandle(id).fetchHistory();
  // Retries are visible in history as later attempts, never unbounded.
  for (const e of history.events ?? []) {
    expect(e.activityTaskStartedEventAttributes?.attempt ?? 1).toBeLessThanOrEqual(8);
  }
  await cancelAndWait(env.client, handle.workflowId);
}

describe('Vast API chaos', () => {
  const offer = simOffer({ host: { proofSec: 100 } });
  let env: FleetEnv;
  beforeAll(async () => {
    env = await startFleetEnv([offer]);
    // A third of all Vast calls answer 429 or 503 (seeded, so the run repeats exactly): the lifecycle
    // must ride through on bounded retries.
    await injectChaos(env, { rate429: 0.2, rate5xx: 0.13, seed: 20261202 });
  });
  afterAll(async () => env?.close());

  it('retries 429/5xx with backoff, rents exactly one instance, and still decides', async () => {
    await expectPromotedThroughChaos(env, offer, `chaos-${offer.id}`);
    const stats = await simStats<'injected429' | 'injected5xx'>(env);
    expect(stats.injected429 + stats.injected5xx).toBeGreaterThan(0);
  });
});

describe('Vast API timeouts', () => {
  const offer = simOffer({ host: { proofSec: 100 } });
  let env: FleetEnv;
  beforeAll(async () => {
    // Calls the client gives up on after 1.5 s; half of them were carried out at Vast first, so a
    // retried create must find the instance it already made (by label) instead of renting again.
    env = await startFleetEnv([offer], { security: { VAST_REQUEST_TIMEOUT_MS: 1500 } });
    await injectChaos(env, { rate429: 0, rate5xx: 0, rateTimeout: 0.25, loseCreateAnswers: 1, seed: 20261203 });
  });
  afterAll(async () => env?.close());

  it('abandons unanswered calls, retries within bounds, and never rents twice', async () => {
    await expectPromotedThroughChaos(env, offer, `chaos-timeout-${offer.id}`);
    const stats = await simStats<'injectedTimeouts' | 'lostCreateAnswers'>(env);
    expect(stats.injectedTimeouts).toBeGreaterThan(0);
    // Vast carried out a create whose answer never arrived: the retry must adopt that instance.
    expect(stats.lostCreateAnswers).toBeGreaterThan(0);
    expect(env.sim.ledger().every((r) => r.destroyed)).toBe(true);
  });
});
