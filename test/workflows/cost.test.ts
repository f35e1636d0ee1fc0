import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForVerdict } from '../../infra/dev/verdict.js';
import { instanceLifecycle, lifecycleStatusQuery } from '../../workflows/index.js';
import type { CostFigures } from '../../workflows/domain/policy/cost.js';
import { formatUsd } from '../../workflows/domain/policy/cost.js';
import { expectCleanedUp, expectKilled } from '../helpers/expect-kill.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { simOffer } from '../helpers/offers.js';

/**
 * Cost end to end: the lifecycle's GPU-$ against what the Vast simulator bills (its dph_total for the
 * instance, from create to destroy). The lifecycle counts from its own clock after the rent answer to
 * after the destroy answer, the simulator from its create to its destroy: they may differ by those
 * answers' latency. Stated tolerance: 3 s of wall time at the billed price (300 real s at 100x).
 */
const SCALE = 0.01;
const TOLERANCE_WALL_SEC = 3;
// Test-side patience for a loaded machine (stall, readiness, proof and batch windows): not what the test is about.
const LOADED = { paramfetchStallSec: 15, daemonReadySec: 40, proofDeadlineSec: 60, benchmarkSec: 120 };
const slow = simOffer({ dph_total: 0.42, host: { proofSec: 400 } });
// Healthy through its benchmark, then (30 s of compressed daemon uptime later, room for a loaded machine) four times slower.
const degrading = simOffer({
  dph_total: 0.61,
  host: { proofSec: 100, faults: { degradeAfterSec: 3000, degradeFactor: 4 } },
});

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv([slow, degrading]);
});
afterAll(async () => env?.close());

/** What the simulator billed this offer's instance: $/h x real hours from create to destroy. */
function simBill(offerId: number) {
  const [i] = env.sim.ledger().filter((l) => l.offerId === offerId);
  if (!i?.destroyedAt) throw new Error(`offer ${offerId}: no destroyed instance in the simulator's ledger`);
  const realSec = (i.destroyedAt - i.createdAt) / 1000 / SCALE;
  return { dph: i.dph, realSec, usd: (i.dph * realSec) / 3600 };
}

function expectBilled(cost: CostFigures, offerId: number) {
  const bill = simBill(offerId);
  expect(cost.dph).toBeCloseTo(bill.dph, 5);
  const tolUsd = (bill.dph * TOLERANCE_WALL_SEC) / SCALE / 3600;
  expect(Math.abs(cost.totalUsd - bill.usd), `lifecycle $${cost.totalUsd} vs simulator $${bill.usd}`).toBeLessThan(
    tolUsd,
  );
  expect(Math.abs(cost.rentedSec - bill.realSec)).toBeLessThan(TOLERANCE_WALL_SEC / SCALE);
  expect(cost.totalUsd).toBeCloseTo(cost.beforeVerdictUsd + cost.productionUsd, 5);
}

async function storedCost(workflowId: string) {
  const r = await env.pool.query<{
    cost_usd: number;
    cost_before_verdict_usd: number;
    cost_production_usd: number;
    bench_rate: number | null;
  }>(
    `SELECT cost_usd, cost_before_verdict_usd, cost_production_usd, bench_rate
     FROM instances WHERE workflow_id = $1`,
    [workflowId],
  );
  return r.rows[0];
}

describe('a lifecycle knows what it cost, in real units at the billed price', () => {
  it('a killed lifecycle: cost in its failure message, details, store and CostUsd match the simulated bill', async () => {
    const id = `cost-killed-${slow.id}`;
    const k = await expectKilled(env, id, fastRequest(slow.id, { minRate: 29, timeouts: LOADED }), 'BenchRateBelowMin');
    const cost = k.details.cost as CostFigures;
    expectBilled(cost, slow.id);
    expect(cost.productionUsd).toBe(0);
    // "… · cost $0.3684 ($0.447/h for 49 min)": the UI's kill line ends with the ledger's figure, in real time.
    expect(k.failure.message, k.failure.message).toContain(`· cost ${formatUsd(cost.totalUsd)} (`);
    expect(k.failure.message).toMatch(/ · cost \$\d+\.\d+ \(\$[\d.]+\/h for \d+(\.\d+)? (s|min|h|d)\)$/);
    // A real rate against the real bar of 29 proofs/h (the host proves one proof per 400 real s per slot).
    expect(k.details.rate as number).toBeLessThan(29);
    expect(k.details.rate as number).toBeGreaterThan(1);
    const row = await storedCost(id);
    expect(row?.cost_usd).toBeCloseTo(cost.totalUsd, 5);
    expect(row?.cost_before_verdict_usd).toBeCloseTo(cost.totalUsd, 5);
    const desc = await env.client.workflow.getHandle(id).describe();
    const sa = desc.searchAttributes.CostUsd?.[0] as number;
    expect(Math.abs(sa - cost.totalUsd)).toBeLessThan((simBill(slow.id).dph * TOLERANCE_WALL_SEC) / SCALE / 3600);
    expectCleanedUp(env, slow.id);
  });

  it('a promoted lifecycle: production cost on top of the verdict, carried through continue-as-new, matches the bill', async () => {
    const id = `cost-promoted-${degrading.id}`;
    const handle = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: id,
      args: [
        fastRequest(degrading.id, {
          minRate: 29,
          timeouts: LOADED,
          watch: { intervalSec: 2, windowSamples: 2, degradedSamples: 2, floorRate: 29, samplesPerRun: 3 },
        }),
      ],
      workflowExecutionTimeout: '5 minutes',
    });
    const verdict = await waitForVerdict(env.client, id);
    const why =
      verdict === 'promoted'
        ? ''
        : await handle.result().then(String, (e: unknown) => String(e instanceof Error ? e.cause : e));
    expect(verdict, why).toBe('promoted');
    const atVerdict = await handle.query(lifecycleStatusQuery);
    expect(atVerdict.clock).toEqual({ scale: SCALE });
    // A real rate: two 100 s proofs at a time is about 72 proofs/h, not 7200.
    expect(atVerdict.rate).toBeGreaterThan(29);
    expect(atVerdict.rate).toBeLessThan(200);
    const verdictCost = atVerdict.costLedger?.beforeVerdictUsd ?? 0;
    expect(verdictCost).toBeGreaterThan(0);
    // Wait for a continue-as-new: the next run still knows the cost before its verdict.
    for (let i = 0; i < 150 && (await handle.describe()).runId === handle.firstExecutionRunId; i++) {
      await new Promise((r) => setTimeout(r, 200));
    }
    expect((await handle.describe()).runId).not.toBe(handle.firstExecutionRunId);
    const later = await handle.query(lifecycleStatusQuery);
    expect(later.costLedger?.beforeVerdictUsd).toBeCloseTo(verdictCost, 5);
    expect(later.cost?.productionUsd).toBeGreaterThan(0);

    const k = await expectKilled(env, id, 'already-started', 'RateDegraded');
    const cost = k.details.cost as CostFigures;
    expectBilled(cost, degrading.id);
    expect(cost.beforeVerdictUsd).toBeCloseTo(verdictCost, 5);
    expect(cost.productionUsd).toBeGreaterThan(0);
    expect(k.failure.message).toContain(`· cost ${formatUsd(cost.totalUsd)} (`);
    const row = await storedCost(id);
    expect(row?.cost_usd).toBeCloseTo(cost.totalUsd, 5);
    expect(row?.cost_production_usd).toBeCloseTo(cost.productionUsd, 5);
    expect(row?.bench_rate).toBe(atVerdict.rate);
    expectCleanedUp(env, degrading.id);
  });
});
