import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lifecycleStatusQuery } from '../../workflows/definitions.js';
import { retireSignal } from '../../workflows/lifecycle/keep-by-dollar.js';
import { FailureType } from '../../workflows/domain/failures.js';
import { type LogicEnv, type Run, startLogicEnv, until } from './harness.js';

/**
 * Keep by the dollar and rebalancing in the lifecycle, with every activity a stub. The stub host proves
 * 72 proofs/h at the offer's $0.50/h: $0.00694 per proof.
 */

let env: LogicEnv;
beforeAll(async () => {
  env = await startLogicEnv();
});
afterAll(async () => env?.close());

/** Four promoted hosts of 100 proofs/h at $0.30/h: the target of 300 costs $0.003 per proof. */
const CHEAP_FLEET = () => Array.from({ length: 4 }, () => ({ rate: 100, dph: 0.3 }));
const FAST_WATCH = { watch: { intervalSec: 0.2, windowSamples: 2, degradedSamples: 2 } };
const outcomes = (run: Run) =>
  run.calls
    .filter((c) => c.name === 'recordOutcome')
    .map((c) => c.input as { outcome: string; failureType: string | null });
const stage = async (run: Run) =>
  (await env.client.workflow.getHandle(run.workflowId).query(lifecycleStatusQuery)).stage;

async function promotedThenCancel(run: Run): Promise<void> {
  await until('promotion', async () => (await stage(run)) === 'promoted');
  await env.client.workflow.getHandle(run.workflowId).cancel();
  await run.result().catch(() => undefined);
}

describe.concurrent('keep by the dollar, at the verdict', () => {
  it('a host over minRate but over 1.5x what the target costs per proof ends PricedOut, destroyed, nothing marked', async () => {
    const run = await env.start({ fleet: CHEAP_FLEET }, { fleetTargetRate: 300 });
    const f = await run.failure();
    expect(f.type).toBe(FailureType.PricedOut);
    expect(f.message).toContain('$0.00694 per proof, over 1.5x the $0.00300 per proof');
    expect(run.count('destroyInstance')).toBe(1);
    expect(outcomes(run).map((o) => [o.outcome, o.failureType])).toEqual([['killed', 'PricedOut']]);
  });

  it('the same host is promoted while the fleet needs it for its target', async () => {
    const run = await env.start({ fleet: () => [{ rate: 100, dph: 0.3 }] }, { fleetTargetRate: 300, ...FAST_WATCH });
    await promotedThenCancel(run);
    expect(run.count('rentedInstances')).toBe(1);
  });

  it('an operator’s deploy (no fleet target) is judged on minRate alone', async () => {
    const run = await env.start({ fleet: CHEAP_FLEET }, FAST_WATCH);
    await promotedThenCancel(run);
    expect(run.count('rentedInstances')).toBe(0);
  });

  it('a store it cannot read is no evidence: promoted on minRate', async () => {
    const run = await env.start(
      {
        fleet: () => {
          throw new Error('connection refused');
        },
      },
      { fleetTargetRate: 300, ...FAST_WATCH },
    );
    await promotedThenCancel(run);
  });
});

describe.concurrent('rebalancing', () => {
  it('the scaler’s retire order ends a promoted host at once: PricedOut, destroyed', async () => {
    const run = await env.start({}, { fleetTargetRate: 300, watch: { intervalSec: 600 } });
    await until('promotion', async () => (await stage(run)) === 'promoted');
    await env.client.workflow
      .getHandle(run.workflowId)
      .signal(retireSignal, { costPerProof: 0.00694, bestCostPerProof: 0.003, factor: 1.25, by: 'fleet scaler run t' });
    const f = await run.failure();
    expect(f.type).toBe(FailureType.PricedOut);
    expect(f.message).toContain('retired for a cheaper host by fleet scaler run t');
    expect(run.count('destroyInstance')).toBe(1);
    expect(outcomes(run).map((o) => o.outcome)).toEqual(['promoted', 'killed']);
  });
});
