import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simBilledDph } from '../../infra/sim/vast/pricing.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { expectCleanedUp, expectKilled } from '../helpers/expect-kill.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { simOffer } from '../helpers/offers.js';
import { expectPromoted } from '../helpers/expect-promoted.js';

const MIN_RATE = 29 / 0.01;
// Healthy through its benchmark, then (15 s of compressed daemon uptime later) four times slower.
const degrading = simOffer({ host: { proofSec: 100, faults: { degradeAfterSec: 1500, degradeFactor: 4 } } });
const repriced = simOffer({ dph_total: 0.5, host: { proofSec: 100 } });

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv([degrading, repriced]);
});
afterAll(async () => env?.close());

describe('promoted instances keep being watched', () => {
  it('kills a promoted host whose rate degrades below the floor (RateDegraded)', async () => {
    const id = `watch-degrade-${degrading.id}`;
    await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: id,
      args: [
        fastRequest(degrading.id, {
          minRate: MIN_RATE,
          watch: { intervalSec: 2, windowSamples: 2, degradedSamples: 2, floorRate: MIN_RATE },
        }),
      ],
      workflowExecutionTimeout: '5 minutes',
    });
    await expectPromoted(env.client, id);
    const k = await expectKilled(env, id, 'already-started', 'RateDegraded');
    expect(k.details.rate).toBeLessThan(MIN_RATE);
    expect(k.details.floorRate).toBe(MIN_RATE);
    expect(k.details.samples).toBe(2);
    expectCleanedUp(env, degrading.id);
  });

  it('continues as new while watching, and kills when the host raises its price (PriceAboveBudget)', async () => {
    const id = `watch-price-${repriced.id}`;
    const handle = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: id,
      args: [fastRequest(repriced.id, { minRate: MIN_RATE, watch: { intervalSec: 1, samplesPerRun: 2, maxDph: 0.6 } })],
      workflowExecutionTimeout: '5 minutes',
    });
    await expectPromoted(env.client, id);
    const firstRun = handle.firstExecutionRunId;
    for (let i = 0; i < 100 && (await env.client.workflow.getHandle(id).describe()).runId === firstRun; i++) {
      await new Promise((r) => setTimeout(r, 200));
    }
    expect((await env.client.workflow.getHandle(id).describe()).runId).not.toBe(firstRun);
    const [inst] = env.sim.ledger().filter((l) => l.offerId === repriced.id);
    await fetch(`${env.sim.url}/_sim/instances/${inst?.id}/price`, {
      method: 'POST',
      body: JSON.stringify({ dph: 0.9 }),
    });
    const k = await expectKilled(env, id, 'already-started', 'PriceAboveBudget');
    expect(k.details).toMatchObject({ dph: 0.9, maxDph: 0.6 });
    // The baseline is the billed price: storage for the 200 GB disk on top of the 8 GiB search price.
    expect(k.details.rentedAt).toBeCloseTo(simBilledDph(repriced, 200), 6);
    expectCleanedUp(env, repriced.id);
    const row = await env.pool.query('SELECT outcome, failure_type FROM instances WHERE workflow_id = $1', [id]);
    expect(row.rows[0]).toMatchObject({ outcome: 'killed', failure_type: 'PriceAboveBudget' });
  });
});
