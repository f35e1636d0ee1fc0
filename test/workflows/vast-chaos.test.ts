import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Chaos } from '../../infra/sim/vast/server.js';
import type { SimOffer } from '../../infra/sim/scenario.js';
import { instanceLifecycle, lifecycleStatusQuery } from '../../workflows/index.js';
import type { LifecycleRequest } from '../../workflows/domain/types.js';
import { expectCleanedUp, expectKilled } from '../helpers/expect-kill.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { cancelAndWait } from '../helpers/cancel-and-wait.js';
import { simOffer } from '../helpers/offers.js';
import { expectPromoted } from '../helpers/expect-promoted.js';
import { waitUntil } from '../../infra/dev/poll.js';

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
async function expectPromotedThroughChaos(
  env: FleetEnv,
  offer: SimOffer,
  id: string,
  over: Partial<LifecycleRequest> = {},
  whilePromoted?: () => Promise<void>,
): Promise<void> {
  const handle = await env.client.workflow.start(instanceLifecycle, {
    taskQueue: env.taskQueue,
    workflowId: id,
    args: [fastRequest(offer.id, { minRate: 29, timeouts: { waitRunningSec: 60 }, ...over })],
    workflowExecutionTimeout: '10 minutes',
  });
  await expectPromoted(env.client, id);
  await whilePromoted?.();
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

describe('Vast answers spoilt on the way (HTML pages, truncated JSON, wrong types, slow)', () => {
  // Its instance also serves nulls in fields the product does not read.
  const offer = simOffer({
    host: { proofSec: 100 },
    instance: { nullFields: ['gpu_name', 'cpu_ram', 'start_date', 'ssh_host', 'ports', 'gpu_util', 'end_date'] },
  });
  let env: FleetEnv;
  beforeAll(async () => {
    env = await startFleetEnv([offer]);
    await injectChaos(env, {
      rate429: 0,
      rate5xx: 0,
      rateHtml: 0.08,
      rateTruncated: 0.08,
      rateWrongTypes: 0.08,
      garbleCreateAnswers: 1,
      slowMs: 150,
      seed: 20261204,
    });
  });
  afterAll(async () => env?.close());

  it('rides through on bounded retries, adopts the create whose answer was cut off, rents once', async () => {
    await expectPromotedThroughChaos(env, offer, `chaos-garbled-${offer.id}`);
    const stats = await simStats<'injectedHtml' | 'injectedTruncated' | 'injectedWrongTypes' | 'garbledCreateAnswers'>(
      env,
    );
    expect(stats.injectedHtml + stats.injectedTruncated + stats.injectedWrongTypes).toBeGreaterThan(0);
    expect(stats.garbledCreateAnswers).toBe(1);
    expectCleanedUp(env, offer.id);
  });
});

describe('creates whose outcome is uncertain or refused', () => {
  const late = simOffer({ host: { proofSec: 100 } });
  const refused = simOffer({ host: { proofSec: 100 } });
  let env: FleetEnv;
  beforeAll(async () => {
    env = await startFleetEnv([late, refused], { security: { VAST_REQUEST_TIMEOUT_MS: 1500 } });
  });
  afterAll(async () => env?.close());

  it('a create that reaches Vast after the client gave up is found by label, never rented twice', async () => {
    await injectChaos(env, { rate429: 0, rate5xx: 0, lateCreates: 1, lateCreateMs: 2500 });
    await expectPromotedThroughChaos(env, late, `chaos-late-${late.id}`);
    expect((await simStats<'lateCreates'>(env)).lateCreates).toBe(1);
    expectCleanedUp(env, late.id);
  });

  it("a 200 with success:false is a refusal in Vast's own words, and nothing is left running", async () => {
    await injectChaos(env, { rate429: 0, rate5xx: 0, refuseCreates: 1 });
    const k = await expectKilled(env, `chaos-refused-${refused.id}`, fastRequest(refused.id), 'VastApiError');
    expect(k.failure.message).toContain('insufficient_credit: Insufficient credit');
    expect(k.failure.message).not.toContain('HTTP 200:');
    expectCleanedUp(env, refused.id, false);
  });
});

describe('a Vast outage of many watch samples while a promoted host is watched', () => {
  const offer = simOffer({ host: { proofSec: 100 } });
  let env: FleetEnv;
  beforeAll(async () => {
    env = await startFleetEnv([offer]);
  });
  afterAll(async () => env?.close());

  it('is waited out and shown in the status; the healthy host is kept', { timeout: 180_000 }, async () => {
    const id = `chaos-outage-${offer.id}`;
    const status = () => env.client.workflow.getHandle(id).query(lifecycleStatusQuery);
    // What matters is the outage against the watch: some 30 samples unreadable, well inside the patience
    // (30 min by default; its end is test/logic's). Its wall length proves nothing more.
    await expectPromotedThroughChaos(env, offer, id, { watch: { intervalSec: 1 } }, async () => {
      const outageSec = 30;
      await fetch(`${env.sim.url}/_sim/outage`, { method: 'POST', body: JSON.stringify({ sec: outageSec }) });
      const until = Date.now() + outageSec * 1000;
      let seen: Awaited<ReturnType<typeof status>>['vastUnreadable'] = null;
      for (let i = 0; i < 60 && !seen; i++) {
        await new Promise((r) => setTimeout(r, 500));
        seen = (await status()).vastUnreadable ?? null;
      }
      expect(seen?.lastError).toMatch(/HTTP 50[34]/);
      // The outage's own length: before its end, a status without the mark would prove nothing.
      await new Promise((r) => setTimeout(r, Math.max(0, until - Date.now())));
      // Vast answers again: the watch reads it, clears the mark, and the host was never taken for lost.
      await waitUntil('the watch to clear vastUnreadable', async () => !(await status()).vastUnreadable, {
        timeoutMs: 30_000,
        intervalMs: 500,
      });
      expect((await status()).stage).toBe('promoted');
      const [inst] = env.sim.ledger().filter((r) => r.offerId === offer.id);
      expect(inst?.destroyed).toBe(false);
      expect((await simStats<'outageAnswers'>(env)).outageAnswers).toBeGreaterThan(10);
    });
    expectCleanedUp(env, offer.id);
  });
});
