import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { FleetRow } from '../../activities/store/queries.js';
import type { PerfSample } from '../../workflows/domain/policy/predictions.js';
import type { RunningRental } from '../../activities/temporal/activities.js';
import type { FleetScalerInput, FleetScalerResult } from '../../workflows/fleet-scaler.js';
import type { RetireOrder } from '../../workflows/lifecycle/keep-by-dollar.js';
import { lifecycleWorkflowId } from '../../workflows/domain/task-queues.js';
import type { OfferFacts } from '../../workflows/domain/types.js';
// The logic tier's one Runtime (installed once per worker): only errors printed, not a taken offer's WARN.
import './harness.js';

/**
 * The scaler's choices, in seconds: the real fleetScaler on the shared dev server with its store, Vast and
 * visibility activities stubbed, and a stub lifecycle (fixtures/scaler-workflows.ts) for its children.
 */

const WORKFLOWS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/scaler-workflows.ts');
// Children are named by offer (instance-offer-<id>) in the shared namespace: offer ids of this file's own.
const BASE = 9_100_000_000 + Math.floor(Math.random() * 1_000_000) * 100;
let nextId = BASE;

interface World {
  offers: OfferFacts[];
  rented: FleetRow[];
  running: RunningRental[];
  samples: PerfSample[];
  taken: Set<number>;
  promoted: Set<number>;
  lifecycles: number[];
}
let world: World;

const offer = (gpuName: string, numGpus: number, ramGb: number, dphTotal: number): OfferFacts => {
  const id = nextId++;
  return { offerId: id, machineId: id, hostId: 1, gpuName, numGpus, cpuRamMb: ramGb * 1024, dphTotal };
};

/** A promoted host of the fleet, its lifecycle a stub that runs until retired. */
const promotedHost = (rate: number, dph: number): FleetRow => {
  const id = nextId++;
  world.promoted.add(id);
  return {
    rentalKey: `rental-${id}`,
    workflowId: lifecycleWorkflowId(id),
    offerId: id,
    machineId: id,
    outcome: 'promoted',
    benchRate: rate,
    dphTotal: dph,
    bidDph: null,
    gpuName: 'RTX 5070 Ti',
    numGpus: 1,
    cpuRamMb: 768 * 1024,
  };
};

const target = (over: Partial<FleetScalerInput> = {}): FleetScalerInput => ({
  targetRate: 90,
  maxDph: 5,
  maxInstances: 10,
  maxConcurrentBenchmarks: 3,
  explorationSlots: 1,
  minRate: 29,
  offerCheckSec: 10,
  filter: { gpuModels: [], minRamMb: 64_000, minReliability: 0.9, minCuda: 12, maxOfferDph: 3 },
  ...over,
});

let client: Client;
let clientConnection: Connection;
let native: NativeConnection;
let worker: Worker;
let running: Promise<void>;
const taskQueue = `scaler-choices-${randomUUID()}`;

beforeAll(async () => {
  const address = inject('temporalAddress');
  clientConnection = await Connection.connect({ address });
  client = new Client({ connection: clientConnection });
  native = await NativeConnection.connect({ address });
  worker = await Worker.create({
    connection: native,
    taskQueue,
    workflowsPath: WORKFLOWS,
    activities: {
      searchOffers: async (query: Record<string, unknown>) => ({
        offers: query.type === 'bid' ? [] : world.offers,
        dropped: { count: 0, firstReason: null },
      }),
      rentedInstances: async () => world.rented,
      runningRentals: async () => world.running,
      perfSamples: async () => world.samples,
      listBadMachines: async () => [],
      restingMachines: async () => [],
      notify: async () => ({ sent: false }),
      lifecycleStub: async (offerId: number) => {
        world.lifecycles.push(offerId);
        return world.taken.has(offerId) ? 'taken' : world.promoted.has(offerId) ? 'promoted' : 'rented';
      },
    },
  });
  running = worker.run();
});
afterAll(async () => {
  worker?.shutdown();
  await running;
  await clientConnection?.close();
  await native?.close();
});

function fresh(): void {
  world = { offers: [], rented: [], running: [], samples: [], taken: new Set(), promoted: new Set(), lifecycles: [] };
}

const scale = (input: FleetScalerInput): Promise<FleetScalerResult> =>
  client.workflow.execute('fleetScaler', {
    taskQueue,
    workflowId: `scaler-choices-${randomUUID()}`,
    args: [input],
    workflowExecutionTimeout: '1 minute',
  });

const startedIds = (r: FleetScalerResult) => r.started.map((s) => s.offerId);

describe('the fleet scaler ranks by value', () => {
  it('rents a big-RAM host before a cheaper small-RAM one of the same model (proof synthesis is RAM-bound)', async () => {
    fresh();
    const small = offer('RTX 5070 Ti', 1, 125, 0.25);
    const big = offer('RTX 5070 Ti', 1, 768, 0.4);
    world.offers = [small, big];
    const r = await scale(target({ maxConcurrentBenchmarks: 1 }));
    expect(startedIds(r)).toEqual([big.offerId]);
    // The reference's figure for a 512 GiB-class host: 37.7 s per proof.
    expect(r.started[0]).toMatchObject({ source: 'prior' });
    expect(r.started[0]!.predictedRate).toBeCloseTo(3600 / 37.7, 6);
  });

  it('explores a model nobody measured only in a slot left over, though its bound ranks it first', async () => {
    fresh();
    const known = offer('RTX 5070 Ti', 1, 768, 0.4);
    const unseen = offer('SIM-UNSEEN', 1, 768, 0.1);
    world.offers = [unseen, known];
    const one = await scale(target({ targetRate: 100, maxConcurrentBenchmarks: 1 }));
    expect(startedIds(one)).toEqual([known.offerId]);
    const two = await scale(target({ targetRate: 100, maxConcurrentBenchmarks: 2 }));
    expect(two.started.map((s) => [s.offerId, s.source])).toEqual([
      [known.offerId, 'prior'],
      [unseen.offerId, 'unknown'],
    ]);
  });

  it('counts a rental in flight at what its hardware is expected to prove', async () => {
    fresh();
    world.offers = [offer('RTX 5070 Ti', 1, 768, 0.4), offer('RTX 5070 Ti', 1, 768, 0.41)];
    const inFlight = { ...promotedHost(0, 0.4), outcome: null, benchRate: null };
    world.rented = [inFlight];
    world.running = [{ workflowId: inFlight.workflowId, rentalKey: inFlight.rentalKey }];
    // 95 proofs/h expected in flight: one more reaches 180, not two.
    const r = await scale(target({ targetRate: 180 }));
    expect(r.started).toHaveLength(1);
    expect(r.fleet.benchmarking).toBe(1);
  });

  it('replaces a taken offer with the next one', async () => {
    fresh();
    const raced = offer('RTX 5070 Ti', 1, 768, 0.3);
    const next = offer('RTX 5070 Ti', 1, 768, 0.4);
    world.offers = [raced, next];
    world.taken.add(raced.offerId);
    const r = await scale(target({ maxConcurrentBenchmarks: 1 }));
    expect(r.skipped).toEqual([{ offerId: raced.offerId, why: 'OfferUnavailable' }]);
    expect(startedIds(r)).toEqual([next.offerId]);
  });

  it('at the target, starts one rental of a clearly cheaper offer, and none without one', async () => {
    fresh();
    world.rented = [promotedHost(100, 2)]; // $0.02 per proof
    const cheap = [offer('RTX 5070 Ti', 1, 768, 0.4), offer('RTX 5070 Ti', 1, 768, 0.41)];
    world.offers = cheap;
    const r = await scale(target({ targetRate: 100 }));
    expect(startedIds(r)).toEqual([cheap[0]!.offerId]);
    expect(r.retired).toBeUndefined();
    world.offers = [offer('RTX 5070 Ti', 1, 768, 2.5)];
    expect((await scale(target({ targetRate: 100 }))).started).toEqual([]);
  });

  it('rebalances: retires the dearest promoted host per proof while the rest still reach the target', async () => {
    fresh();
    const dear = promotedHost(60, 1.5); // $0.025 per proof
    world.rented = [promotedHost(100, 0.5), promotedHost(100, 0.5), dear];
    const handle = await client.workflow.start('instanceLifecycle', {
      taskQueue,
      workflowId: dear.workflowId,
      args: [{ offerId: dear.offerId }],
      workflowExecutionTimeout: '1 minute',
    });
    const r = await scale(target({ targetRate: 200 }));
    expect(r.retired).toEqual([{ rentalKey: dear.rentalKey, workflowId: dear.workflowId, costPerProof: 0.025 }]);
    expect(r.fleetRate).toBe(200);
    const order = (await handle.result()) as RetireOrder;
    expect(order).toMatchObject({ costPerProof: 0.025, bestCostPerProof: 0.005, factor: 1.25 });
  });
});
