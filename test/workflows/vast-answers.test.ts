import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetScalerInput } from '../../workflows/fleet-scaler.js';
import { fleetScaler } from '../../workflows/index.js';
import { expectCleanedUp } from '../helpers/expect-kill.js';
import { cancelAndWait } from '../helpers/cancel-and-wait.js';
import { fastRequest, type FleetEnv, startFleetEnv, simClock } from '../helpers/fleet-env.js';
import { simOffer } from '../helpers/offers.js';

// Model name unique to this file: GPU-model history is shared across the test database.
const MODEL = `SIM-ODDROW-${Date.now()}`;
const o = {
  // The cheapest row of the search lacks a machine id: dropped and reported, the rest still rents.
  oddRow: simOffer({ gpu_name: MODEL, num_gpus: 1, dph_total: 0.1, offerNullFields: ['machine_id'] }),
  goodRow: simOffer({ gpu_name: MODEL, num_gpus: 1, dph_total: 0.3, host: { proofSec: 100 } }),
};

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv(Object.values(o));
});
afterAll(async () => env?.close());

// The gone and stopping answers are test/activities/vast-answers.test.ts; here, the scaler's search.
describe('Vast answers read as Vast means them (end to end on the simulator)', () => {
  it('a search with one unusable row drops and reports it, and still rents from the rest', async () => {
    const input: FleetScalerInput = {
      targetRate: 1_000_000,
      maxDph: 1_000,
      maxInstances: 1_000,
      // The namespace is shared: a lifecycle another file left running counts as a benchmark in flight.
      maxConcurrentBenchmarks: 1_000,
      explorationSlots: 1,
      minRate: 29,
      offerCheckSec: 3,
      filter: { gpuModels: [MODEL], minRamMb: 64_000, minReliability: 0.9, minCuda: 12, maxOfferDph: 3 },
      lifecycle: { benchmarkProofs: 4, timeouts: fastRequest(1).timeouts, clock: simClock() },
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
