import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetScalerInput } from '../../workflows/fleet-scaler.js';
import { fleetScaler } from '../../workflows/index.js';
import { expectCleanedUp, expectKilled } from '../helpers/expect-kill.js';
import { cancelAndWait } from '../helpers/cancel-and-wait.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { simOffer } from '../helpers/offers.js';

// Model name unique to this file: GPU-model history is shared across the test database.
const MODEL = `SIM-ODDROW-${Date.now()}`;
const o = {
  // Never runs (container exits); after the destroy, its show answers 404 instead of {"instances": null}.
  gone404: simOffer({ instance: { fate: 'exited', afterDestroy: '404-no_such_instance' } }),
  goneNotFound: simOffer({ instance: { fate: 'exited', afterDestroy: '404-not_found' } }),
  // Vast turns it to intended_status "stopped" while it still loads (an outbid spot, a zero balance).
  stopping: simOffer({ instance: { fate: 'stopped', loadingSec: 20 } }),
  // The cheapest row of the search lacks a machine id: dropped and reported, the rest still rents.
  oddRow: simOffer({ gpu_name: MODEL, num_gpus: 1, dph_total: 0.1, offerNullFields: ['machine_id'] }),
  goodRow: simOffer({ gpu_name: MODEL, num_gpus: 1, dph_total: 0.3, host: { proofSec: 100 } }),
};

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv(Object.values(o));
});
afterAll(async () => env?.close());

async function destroyedAt(workflowId: string): Promise<unknown> {
  const row = await env.pool.query<{ destroyed_at: Date | null }>(
    'SELECT destroyed_at FROM instances WHERE workflow_id = $1',
    [workflowId],
  );
  return row.rows[0]?.destroyed_at ?? null;
}

describe('Vast answers read as Vast means them (end to end on the simulator)', () => {
  for (const [name, offer] of [
    ['404 no_such_instance', o.gone404],
    ['404 not_found', o.goneNotFound],
  ] as const) {
    it(`a kill whose confirming show answers ${name} is recorded destroyed, with no DestroyFailed`, async () => {
      const id = `answers-gone-${offer.id}`;
      await expectKilled(env, id, fastRequest(offer.id), 'InstanceNeverRunning');
      expectCleanedUp(env, offer.id);
      expect(await destroyedAt(id)).not.toBeNull();
      const history = JSON.stringify((await env.client.workflow.getHandle(id).fetchHistory()).events);
      expect(history).not.toContain('DestroyFailed');
    });
  }

  it('a stopping instance fails within one poll, with the status fields as evidence', async () => {
    const id = `answers-stopping-${o.stopping.id}`;
    const started = Date.now();
    // waitRunningSec is long: only the fast path can end it in a few seconds.
    const k = await expectKilled(
      env,
      id,
      fastRequest(o.stopping.id, { timeouts: { waitRunningSec: 600 } }),
      'InstanceNeverRunning',
    );
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(k.failure.message).toMatch(/intends it stopped/);
    expect(k.details).toMatchObject({ intendedStatus: 'stopped', curState: 'stopped', nextState: 'stopped' });
    expectCleanedUp(env, o.stopping.id);
  });

  it('a search with one unusable row drops and reports it, and still rents from the rest', async () => {
    const input: FleetScalerInput = {
      targetRate: 1_000_000,
      maxDph: 1_000,
      maxInstances: 1_000,
      // The namespace is shared: a lifecycle another file left running counts as a benchmark in flight.
      maxConcurrentBenchmarks: 1_000,
      explorationSlots: 1,
      minRate: 29 / 0.01,
      offerCheckSec: 3,
      filter: { gpuModels: [MODEL], minRamMb: 64_000, minReliability: 0.9, minCuda: 12, maxOfferDph: 3 },
      lifecycle: { benchmarkProofs: 4, timeouts: fastRequest(1).timeouts },
    };
    const result = await env.client.workflow.execute(fleetScaler, {
      taskQueue: env.taskQueue,
      workflowId: `answers-scaler-${o.goodRow.id}`,
      args: [input],
      workflowExecutionTimeout: '2 minutes',
    });
    expect(result.droppedOffers?.count).toBe(1);
    expect(result.droppedOffers?.firstReason).toMatch(new RegExp(`offer ${o.oddRow.id}\\).*machine_id`));
    expect(result.started.map((s) => s.offerId)).toEqual([o.goodRow.id]);
    for (const s of result.started) await cancelAndWait(env.client, s.workflowId);
    expectCleanedUp(env, o.goodRow.id);
    expectCleanedUp(env, o.oddRow.id, false);
  });
});
