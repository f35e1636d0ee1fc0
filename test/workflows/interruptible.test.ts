import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simStorageDph } from '../../infra/sim/vast/pricing.js';
import { expectPromoted } from '../helpers/expect-promoted.js';
import type { FleetScalerInput } from '../../workflows/fleet-scaler.js';
import { fleetScaler, instanceLifecycle } from '../../workflows/index.js';
import { bidFor } from '../../workflows/domain/policy/bid.js';
import type { BidHistory, BidPolicy } from '../../workflows/domain/types.js';
import { lifecycleWorkflowId } from '../../workflows/domain/task-queues.js';
import { cancelAndWait, cancelStillRunning } from '../helpers/cancel-and-wait.js';
import { expectCleanedUp, expectKilled } from '../helpers/expect-kill.js';
import { waitForBenchmarkRunning } from '../helpers/fault-probes.js';
import { fleetBase } from '../helpers/fleet-base.js';
import { fastRequest, type FleetEnv, startFleetEnv, simClock } from '../helpers/fleet-env.js';
import { simOffer } from '../helpers/offers.js';
import { pollUntil } from '../../infra/dev/poll.js';

/**
 * Interruptible rentals end to end (real Temporal, Postgres, the Vast simulator and simulated hosts):
 * a bid rental promoted and its bid raised, outbid while promoted and during the benchmark (Preempted,
 * the machine never marked, the instance destroyed, the scaler renting a replacement), and a bid too
 * low at create (BidTooLow). One fleet for the file.
 */
const MIN_RATE = 29;
// GPU-model history is shared across the test database: a model of this file's own.
const MODEL = `SIM-SPOT-${Date.now()}`;
const bid = (maxBidDph: number): BidPolicy => ({ marginPct: 15, maxBidDph, rebids: 1 });
// Simulated hosts on two shared cores: a paramfetch progress gap of 3 s is load, not a stall.
const request = (offerId: number, over: Parameters<typeof fastRequest>[1]) =>
  fastRequest(offerId, { ...over, timeouts: { paramfetchStallSec: 15, daemonReadySec: 30, ...over?.timeouts } });

const offers = {
  promoted: simOffer({ gpu_name: MODEL, dph_total: 0.8, market: { minBid: 0.3 }, host: { proofSec: 100 } }),
  replacement: simOffer({ gpu_name: MODEL, dph_total: 0.9, market: { minBid: 0.3 }, host: { proofSec: 100 } }),
  // Slow proofs keep the benchmark long enough to be outbid in the middle of it.
  benchmark: simOffer({ gpu_name: `${MODEL}-B`, dph_total: 0.8, market: { minBid: 0.3 }, host: { proofSec: 200 } }),
  // The listing lags the market by a day (0.2 $/h shown, 0.5 $/h taken): every bid up to the cap is refused.
  tooLow: simOffer({
    gpu_name: `${MODEL}-L`,
    dph_total: 0.8,
    market: { minBid: 0.2, minBidPath: [{ atSec: 0, minBid: 0.5 }], searchLagSec: 86_400 },
  }),
};

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv(Object.values(offers));
});
afterAll(async () => {
  // Also when a test failed midway: a lifecycle left running would count in later files' scaler caps.
  if (env) {
    await cancelStillRunning(env.client, [
      `spot-promoted-${offers.promoted.id}`,
      lifecycleWorkflowId(offers.replacement.id),
      `spot-bench-${offers.benchmark.id}`,
      `spot-low-${offers.tooLow.id}`,
    ]);
  }
  await env?.close();
});

const setMinBid = (offerId: number, minBid: number) =>
  fetch(`${env.sim.url}/_sim/offers/${offerId}/min_bid`, { method: 'POST', body: JSON.stringify({ minBid }) });

/** A value once `fn` gives one (null, undefined and false are "not yet"); errors fail at once. */
function until<T>(what: string, fn: () => Promise<T | null | undefined> | T | null | undefined, ms = 180_000) {
  const probe = async () => {
    const v = await fn();
    return v === null || v === false ? undefined : (v as Exclude<T, false | null>);
  };
  return pollUntil(what, probe, { timeoutMs: ms, intervalMs: 200, isFatal: () => true });
}

/** Never counted against the machine: no failure count, no bad mark. */
async function expectNotMarked(machineId: number) {
  const failures = await env.pool.query('SELECT failure_type FROM machine_failures WHERE machine_id = $1', [machineId]);
  const bad = await env.pool.query('SELECT reason FROM bad_machines WHERE machine_id = $1', [machineId]);
  expect(failures.rows).toEqual([]);
  expect(bad.rows).toEqual([]);
}

describe('interruptible rentals', () => {
  it(
    'a bid rental is promoted, raises its bid as min_bid nears it, is outbid while promoted and replaced by the scaler',
    { timeout: 400_000 },
    async () => {
      const o = offers.promoted;
      const id = `spot-promoted-${o.id}`;
      await env.client.workflow.start(instanceLifecycle, {
        taskQueue: env.taskQueue,
        workflowId: id,
        args: [request(o.id, { minRate: MIN_RATE, bid: bid(0.6), watch: { intervalSec: 1 } })],
        workflowExecutionTimeout: '5 minutes',
      });
      await expectPromoted(env.client, id);
      const placed = bidFor(0.3, bid(0.6), o.num_gpus) ?? 0;
      expect(placed).toBe(0.345);
      const [inst] = env.sim.ledger().filter((l) => l.offerId === o.id);
      expect(inst).toMatchObject({ bid: placed, destroyed: false });
      // The store counts interruptible time at the price paid: the bid plus storage for the 200 GB disk.
      const row = await env.pool.query<{ bid_dph: number; dph_total: number }>(
        'SELECT bid_dph, dph_total FROM instances WHERE workflow_id = $1',
        [id],
      );
      expect(row.rows[0]?.bid_dph, JSON.stringify((await env.pool.query('SELECT * FROM instances')).rows)).toBe(placed);
      expect(row.rows[0]?.dph_total).toBeCloseTo(placed + simStorageDph(200, o.storage_cost), 6);

      // min_bid within half the margin of our bid: the watch raises the bid (change bid) to stay ahead.
      await setMinBid(o.id, 0.33);
      await until('the bid raised to 0.38 $/h', () =>
        env.sim.ledger().find((l) => l.id === inst?.id && l.bid === 0.38),
      );
      // The store follows what Vast bills after the raise, so the scaler's budget counts the new price.
      await until('the raised price recorded', async () => {
        const r = await env.pool.query<{ bid_dph: number; dph_total: number }>(
          'SELECT bid_dph, dph_total FROM instances WHERE workflow_id = $1',
          [id],
        );
        const now = r.rows[0];
        return now?.bid_dph === 0.38 && Math.abs(now.dph_total - (0.38 + simStorageDph(200, o.storage_cost))) < 1e-6;
      });

      // The market passes the cap (0.6 $/h): Vast stops the instance; the lifecycle ends Preempted.
      await setMinBid(o.id, 0.7);
      const k = await expectKilled(env, id, 'already-started', 'Preempted');
      expect(k.failure.message).toMatch(/during promoted/);
      expect(k.details).toMatchObject({
        bidDph: 0.38,
        minBidDph: 0.7,
        actualStatus: 'stopped',
        intendedStatus: 'stopped',
        curState: 'stopped',
        nextState: 'stopped',
      });
      const history = k.details.bidHistory as BidHistory;
      expect(history.bids.map((b) => [b.priceDph, b.why])).toEqual([
        [0.345, 'rent'],
        [0.38, 'raise'],
      ]);
      expect(history.prices.some((p) => p.minBidDph === 0.33)).toBe(true);
      expect(history.prices.at(-1)).toMatchObject({ minBidDph: 0.7, status: 'stopped' });
      expectCleanedUp(env, o.id);
      await expectNotMarked(o.machine_id);

      // The next scaler run replaces it with an interruptible rental of the same model that its bid cap allows.
      // Shared database and namespace: what other files left counts into the caps, so they sit above it.
      const base = await fleetBase(env.client, env.pool);
      const input: FleetScalerInput = {
        targetRate: base.rate + 1,
        maxDph: base.dph + 3,
        maxInstances: base.instances + 20,
        maxConcurrentBenchmarks: base.benchmarks + 20,
        explorationSlots: 0,
        minRate: MIN_RATE,
        offerCheckSec: 5,
        filter: { gpuModels: [MODEL], minRamMb: 64_000, minReliability: 0.9, minCuda: 12, maxOfferDph: 3 },
        lifecycle: { benchmarkProofs: 4, timeouts: request(1, {}).timeouts, clock: simClock() },
        capacity: { onDemandFloorRate: 0, bidMarginPct: 15, maxBidFraction: 0.8, rebids: 1 },
      };
      const result = await env.client.workflow.execute(fleetScaler, {
        taskQueue: env.taskQueue,
        workflowId: `spot-scaler-${o.id}`,
        args: [input],
        workflowExecutionTimeout: '3 minutes',
      });
      // The preempted offer itself is out: min_bid 0.7 with the margin passes 80 % of its compute price.
      expect(result.started, JSON.stringify(result)).toEqual([
        expect.objectContaining({ offerId: offers.replacement.id, bidDph: 0.345, source: 'class' }),
      ]);
      const replacementId = result.started[0]?.workflowId ?? '';
      await until('the replacement rented', () =>
        env.sim.ledger().find((l) => l.offerId === offers.replacement.id && l.bid === 0.345),
      );
      await cancelAndWait(env.client, replacementId);
    },
  );

  it(
    'outbid during the benchmark: Preempted (the lost host is its symptom), destroyed, machine not marked',
    { timeout: 300_000 },
    async () => {
      const o = offers.benchmark;
      const id = `spot-bench-${o.id}`;
      await env.client.workflow.start(instanceLifecycle, {
        taskQueue: env.taskQueue,
        workflowId: id,
        args: [request(o.id, { minRate: MIN_RATE / 2, benchmarkProofs: 12, bid: bid(0.6) })],
        workflowExecutionTimeout: '5 minutes',
      });
      // Into the batch: the host's daemon has taken its proofs (a proof takes 2 s here, the 12 at least 8 s).
      await waitForBenchmarkRunning(env.client, id, 180_000);
      await setMinBid(o.id, 0.9);
      const k = await expectKilled(env, id, 'already-started', 'Preempted');
      expect(k.failure.message).toMatch(/during benchmark/);
      expect(k.details).toMatchObject({ bidDph: 0.345, minBidDph: 0.9, curState: 'stopped' });
      // What the lifecycle saw first was the host going silent, not a fault of the machine.
      expect(k.details.hostSymptom).toMatchObject({ type: expect.stringMatching(/HostLost|ProofFailed|Daemon/) });
      expectCleanedUp(env, o.id);
      await expectNotMarked(o.machine_id);
    },
  );

  it('a bid too low at create: refused, placed once more higher, then BidTooLow; nothing left billing', async () => {
    const o = offers.tooLow;
    const k = await expectKilled(
      env,
      `spot-low-${o.id}`,
      fastRequest(o.id, { minRate: MIN_RATE, bid: bid(0.4) }),
      'BidTooLow',
    );
    expect(k.failure.message).toMatch(/during provisioning/);
    const history = k.details.bidHistory as BidHistory;
    expect(history.bids.map((b) => b.priceDph)).toEqual([0.23, 0.265]);
    const made = env.sim.ledger().filter((l) => l.offerId === o.id);
    expect(made).toHaveLength(2);
    expect(made.every((l) => l.destroyed)).toBe(true);
    await expectNotMarked(o.machine_id);
  });
});
