import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lifecycleStatusQuery } from '../../workflows/definitions.js';
import { FailureType } from '../../workflows/domain/failures.js';
import { hostFailure, type LogicEnv, OFFER, type Run, startLogicEnv } from '../logic/harness.js';
import { historyText } from '../helpers/history-text.js';

/**
 * Where the lifecycle sends its notifications, with every activity a stub: after the destroy and its
 * record, never before; a promote's does not hold up the watch; a failed destroy is announced.
 */
let env: LogicEnv;
beforeAll(async () => {
  env = await startLogicEnv();
});
afterAll(async () => env?.close());

const names = (run: Run) => run.calls.map((c) => c.name);
const notes = (run: Run) => run.calls.filter((c) => c.name === 'notify').map((c) => c.input as Record<string, unknown>);

describe.concurrent('lifecycle notifications', () => {
  it('a kill is announced once, after the instance is destroyed and the kill recorded', async () => {
    const run = await env.start({ host: { warmupProof: () => Promise.reject(hostFailure(FailureType.ProofFailed)) } });
    expect((await run.failure()).type).toBe(FailureType.ProofFailed);
    const n = notes(run);
    expect(n).toHaveLength(1);
    expect(n[0]).toMatchObject({
      kind: 'kill',
      workflowId: run.workflowId,
      failureType: FailureType.ProofFailed,
      machineId: OFFER.machineId,
      gpu: OFFER.gpuName,
      dphUsd: OFFER.dphTotal,
    });
    expect(n[0]?.instanceId).toEqual(expect.any(Number));
    expect(n[0]?.rentalKey).toEqual(expect.any(String));
    const order = names(run);
    expect(order.indexOf('destroyInstance')).toBeLessThan(order.indexOf('notify'));
    expect(order.lastIndexOf('recordOutcome')).toBeLessThan(order.indexOf('notify'));
  });

  it('a promote is announced and the watch starts without waiting for it', async () => {
    const run = await env.start({}, { watch: { intervalSec: 0.2, samplesPerRun: 50 } });
    const handle = env.client.workflow.getHandle(run.workflowId);
    const end = Date.now() + 20_000;
    while (run.count('sampleDaemon') < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    expect((await handle.query(lifecycleStatusQuery)).stage).toBe('promoted');
    expect(notes(run)).toEqual([expect.objectContaining({ kind: 'promote', rateProofsPerHour: 72 })]);
    await handle.cancel();
    await run.result().catch(() => undefined);
    expect(notes(run).map((x) => x.kind)).toEqual(['promote', 'kill']);
  });

  it('a receiver that is down holds up neither the kill nor the destroy, and fails nothing', async () => {
    let destroyedAt = 0;
    const run = await env.start({
      host: { warmupProof: () => Promise.reject(hostFailure(FailureType.ProofFailed)) },
      destroy: async () => {
        destroyedAt = Date.now();
      },
      notify: () => Promise.reject(new Error('fetch failed: connect ECONNREFUSED 127.0.0.1:9')),
    });
    // The lifecycle ends with its own kill, not the notification's failure.
    expect((await run.failure()).type).toBe(FailureType.ProofFailed);
    // Retried, then given up on; the instance was destroyed and the kill recorded before the first try.
    expect(run.count('notify')).toBeGreaterThan(1);
    const order = names(run);
    expect(order.indexOf('destroyInstance')).toBeLessThan(order.indexOf('notify'));
    expect(order.lastIndexOf('recordOutcome')).toBeLessThan(order.indexOf('notify'));
    const handle = env.client.workflow.getHandle(run.workflowId);
    // Closed within the notification's own bound (30 s) after the destroy.
    expect(((await handle.describe()).closeTime?.getTime() ?? Infinity) - destroyedAt).toBeLessThan(35_000);
    expect(historyText(await handle.fetchHistory())).toContain('ECONNREFUSED');
  });

  it('a destroy that fails is announced as destroy_failed, and the lifecycle fails DestroyFailed', async () => {
    const run = await env.start({
      host: { runBenchmark: () => Promise.reject(hostFailure(FailureType.DaemonCrashed)) },
      destroy: () => Promise.reject(ApplicationFailure.nonRetryable('Vast answered 500 for an hour', 'VastApiError')),
    });
    const f = await run.failure();
    expect(f.type).toBe(FailureType.DestroyFailed);
    expect(notes(run)).toEqual([
      expect.objectContaining({
        kind: 'destroy_failed',
        failureType: FailureType.DaemonCrashed,
        machineId: OFFER.machineId,
      }),
    ]);
    const order = names(run);
    expect(order.lastIndexOf('recordOutcome')).toBeLessThan(order.indexOf('notify'));
  });
});
