import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailureType } from '../../workflows/domain/failures.js';
import { verdictFor } from '../../workflows/domain/policy/verdicts.js';
import { hostFailure, inputsOf, type LogicEnv, OFFER, startLogicEnv, until } from './harness.js';

/**
 * The promoted watch's budget edge, the kill path's own failure and the failures Vast hands the lifecycle
 * before a host exists: each decided by the real workflow code with every activity a stub.
 */

let env: LogicEnv;
beforeAll(async () => {
  env = await startLogicEnv();
});
afterAll(async () => env?.close());

/** A watch that samples every 0.2 s and judges a 2-sample window. */
const FAST_WATCH = { watch: { intervalSec: 0.2, windowSamples: 2, degradedSamples: 2 } };

// The watch's three kills themselves are in lifecycle-decisions.test.ts; here, the budget's edge.
describe.concurrent('the promoted watch', () => {
  it('a price at the budget is kept', async () => {
    const run = await env.start({ instanceState: () => ({ status: 'running', dph: 0.6 }) }, FAST_WATCH);
    const handle = env.client.workflow.getHandle(run.workflowId);
    await until('five watch samples', () => run.count('instanceState') >= 5);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await handle.cancel();
    await run.result().catch(() => undefined);
  });
});

describe.concurrent('a watched host whose token nears its expiry', () => {
  const DAY_MS = 86_400_000;

  it('is retired before the token lapses: destroyed, HostTokenExpiring, nothing counted against the machine', async () => {
    // Expiring within the retire margin (1 h + two watch intervals): the first watch sample retires it.
    const expiresAt = new Date(Date.now() + 30 * 60_000).toISOString();
    const run = await env.start({ hostTokenExpiresAt: expiresAt }, FAST_WATCH);
    const f = await run.failure();
    expect(f.type).toBe(FailureType.HostTokenExpiring);
    expect(f.message).toContain(`expires at ${expiresAt}`);
    expect(f.details?.[0]).toMatchObject({ hostTokenExpiresAt: expiresAt });
    // Promoted first (the check belongs to the watch), then destroyed and recorded as not the machine's doing.
    const outcomes = inputsOf(run, 'recordOutcome') as Array<Record<string, unknown>>;
    expect(outcomes.map((o) => o.outcome)).toEqual(['promoted', 'killed']);
    expect(outcomes[1]).toMatchObject({ failureType: FailureType.HostTokenExpiring, destroyed: true });
    expect(run.count('destroyInstance')).toBe(1);
    expect(verdictFor(FailureType.HostTokenExpiring)).toMatchObject({ verdict: 'inconclusive', marks: 'never' });
  });

  it('is kept while its token has longer to run than the margin', async () => {
    const run = await env.start({ hostTokenExpiresAt: new Date(Date.now() + 90 * DAY_MS).toISOString() }, FAST_WATCH);
    const handle = env.client.workflow.getHandle(run.workflowId);
    await until('five watch samples', () => run.count('instanceState') >= 5);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await handle.cancel();
    await run.result().catch(() => undefined);
  });
});

describe.concurrent('a watched rental whose price moves', () => {
  it('records the new price once, with the cost counted up to the move, and keeps proving', async () => {
    // Rented at OFFER's price; from the third sample Vast bills more (a repriced instance, or a raised bid).
    const moved = OFFER.dphTotal + 0.1;
    const run = await env.start(
      { instanceState: (n) => ({ status: 'running', dph: n < 2 ? OFFER.dphTotal : moved }) },
      FAST_WATCH,
    );
    const handle = env.client.workflow.getHandle(run.workflowId);
    await until('six watch samples', () => run.count('instanceState') >= 6);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const moves = inputsOf(run, 'recordPriceMove') as Array<Record<string, unknown>>;
    expect(moves).toHaveLength(1);
    expect(moves[0]).toMatchObject({ dphTotal: moved, bidDph: null });
    expect(Number(moves[0]?.beforeVerdictUsd) + Number(moves[0]?.productionUsd)).toBeGreaterThan(0);
    expect(Date.parse(String(moves[0]?.countedAt))).not.toBeNaN();
    const attrs = (await handle.describe()).searchAttributes;
    expect(attrs.DollarsPerHour).toEqual([moved]);
    await handle.cancel();
    await run.result().catch(() => undefined);
  });
});

describe.concurrent('the kill path and the failures before a host exists', () => {
  it('a destroy that fails ends DestroyFailed naming the instance, with the kill reason kept', async () => {
    const run = await env.start({
      host: { paramfetch: () => Promise.reject(hostFailure(FailureType.ParamfetchFailed)) },
      destroy: () =>
        Promise.reject(ApplicationFailure.create({ type: 'VastHttp403', message: 'forbidden', nonRetryable: true })),
    });
    const f = await run.failure();
    expect(f.type).toBe(FailureType.DestroyFailed);
    expect(f.message).toMatch(/^instance \d+ could not be destroyed and may still be billing; destroy it by hand/);
    expect(f.details?.[0]).toMatchObject({ killReason: FailureType.ParamfetchFailed });
  });

  it('an instance that never runs ends InstanceNeverRunning and is destroyed, the host never asked', async () => {
    const run = await env.start({
      awaitRunning: () =>
        Promise.reject(
          ApplicationFailure.create({
            type: FailureType.InstanceNeverRunning,
            message: 'still loading after 5 s',
            nonRetryable: true,
          }),
        ),
    });
    const f = await run.failure();
    expect(f.type).toBe(FailureType.InstanceNeverRunning);
    expect(run.count('destroyInstance')).toBe(1);
    expect(run.count('paramfetch')).toBe(0);
  });

  it('a daemon that never answers GetStatus ends DaemonNeverReady during warmup', async () => {
    const run = await env.start({
      host: { startDaemon: () => Promise.reject(hostFailure(FailureType.DaemonNeverReady)) },
    });
    const f = await run.failure();
    expect(f.type).toBe(FailureType.DaemonNeverReady);
    expect(f.message).toContain('during warmup');
    expect(run.count('warmupProof')).toBe(0);
  });
});
