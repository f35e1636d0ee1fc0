import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVastActivities, type RentOfferInput } from '../../activities/vast/activities.js';
import { VastClient } from '../../activities/vast/client.js';
import { startVastSim, type VastSim } from '../../infra/sim/vast/server.js';
import { hostTaskQueue } from '../../workflows/domain/task-queues.js';
import { simOffer } from '../helpers/offers.js';

/**
 * Vast answers read as Vast means them, from the simulator's answers through the Vast activities
 * (MockActivityEnvironment): a kill whose confirming show answers 404, a stopping instance. No host
 * process boots; what the lifecycle does with each answer is test/logic's.
 */
const KEY = 'vast-answers-key';
const o = {
  // Never runs (container exits); after the destroy, its show answers 404 instead of {"instances": null}.
  gone404: simOffer({ instance: { fate: 'exited', afterDestroy: '404-no_such_instance' } }),
  goneNotFound: simOffer({ instance: { fate: 'exited', afterDestroy: '404-not_found' } }),
  // Vast turns it to intended_status "stopped" while it still loads (an outbid spot, a zero balance).
  stopping: simOffer({ instance: { fate: 'stopped', loadingSec: 20 } }),
};

let sim: VastSim;
let acts: ReturnType<typeof createVastActivities>;
beforeAll(async () => {
  sim = await startVastSim({
    offers: Object.values(o),
    apiKey: KEY,
    bootHost: () => Promise.resolve({ workDir: '', alive: true, kill() {} }),
  });
  acts = createVastActivities({
    vast: new VastClient({ baseUrl: sim.url, apiKey: KEY }),
    hostEnv: {},
    pollIntervalMs: 50,
  });
});
afterAll(async () => sim?.close());

const run = <R>(fn: () => Promise<R>): Promise<R> =>
  new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') }).run(fn) as Promise<R>;
const failure = async (p: Promise<unknown>): Promise<ApplicationFailure> => {
  const err = await p.then(
    () => new Error('expected a failure'),
    (e: unknown) => e,
  );
  if (!(err instanceof ApplicationFailure)) throw err;
  return err;
};
const rent = (offerId: number) => {
  const label = `gpufleet-answers-${offerId}`;
  const input: RentOfferInput = { offerId, label, image: 'img', diskGb: 200, hostTaskQueue: hostTaskQueue(label) };
  return run(() => acts.rentOffer(input));
};

describe('Vast answers read as Vast means them (the simulator through the Vast activities)', () => {
  for (const [name, offer] of [
    ['404 no_such_instance', o.gone404],
    ['404 not_found', o.goneNotFound],
  ] as const) {
    it(`a kill whose confirming show answers ${name} is destroyed, not a failure`, async () => {
      const { instanceId } = await rent(offer.id);
      const f = await failure(run(() => acts.awaitRunning({ instanceId, deadlineMs: Date.now() + 60_000 })));
      expect(f.type).toBe('InstanceNeverRunning');
      await expect(run(() => acts.destroyInstance(instanceId))).resolves.toEqual({ alreadyGone: false });
      // Gone as Vast says it: the show answers the 404 this scenario serves.
      const show = await fetch(`${sim.url}/api/v0/instances/${instanceId}/`, {
        headers: { Authorization: `Bearer ${KEY}` },
      });
      expect(show.status).toBe(404);
      expect(sim.ledger().filter((l) => l.offerId === offer.id && l.destroyedAt === null)).toEqual([]);
    });
  }

  it('a stopping instance fails within one poll, with the status fields as evidence', async () => {
    const { instanceId } = await rent(o.stopping.id);
    const started = Date.now();
    // The deadline is far: only the fast path (stopped while loading) ends it in seconds.
    const f = await failure(run(() => acts.awaitRunning({ instanceId, deadlineMs: Date.now() + 600_000 })));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(f.type).toBe('InstanceNeverRunning');
    expect(f.message).toMatch(/intends it stopped/);
    expect(f.details?.[0]).toMatchObject({ intendedStatus: 'stopped', curState: 'stopped', nextState: 'stopped' });
    await run(() => acts.destroyInstance(instanceId));
  });
});
