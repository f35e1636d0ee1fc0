import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPromoted } from '../helpers/expect-promoted.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { expectKilled } from '../helpers/expect-kill.js';
import type { FleetEnv } from '../helpers/fleet-env.js';
import { simOffer } from '../helpers/offers.js';
import { pollUntil } from '../../infra/dev/poll.js';

// The workers' logger (pino behind the SDK's Runtime logger) writes here; set before fleet-env installs it.
const logFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'fleet-log-')), 'worker.jsonl');
process.env.FLEET_ENV_JSON_LOG = logFile;
const { API_KEY, fastRequest, startFleetEnv } = await import('../helpers/fleet-env.js');

const MIN_RATE = 29;
const timeouts = { paramfetchStallSec: 15 };
const healthy = simOffer({ gpu_name: 'RTX 4090', num_gpus: 2, host: { proofSec: 100 } });
const slow = simOffer({ gpu_name: 'RTX 3060', num_gpus: 1, host: { proofSec: 600 } });

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv([healthy, slow]);
});
afterAll(async () => env?.close());

type Line = Record<string, unknown>;
function lines(): Line[] {
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Line);
}

describe('structured worker logs', () => {
  it('one JSON line per rent, stage, kill and promote, with workflow id, instance, machine, GPU and $/h', async () => {
    const killId = `log-kill-${slow.id}`;
    await expectKilled(env, killId, fastRequest(slow.id, { minRate: MIN_RATE, timeouts }), 'BenchRateBelowMin');
    const promoteId = `log-promote-${healthy.id}`;
    const handle = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: promoteId,
      args: [fastRequest(healthy.id, { minRate: MIN_RATE, timeouts })],
      workflowExecutionTimeout: '5 minutes',
    });
    await expectPromoted(env.client, promoteId);
    // The promote line follows the promoted stage (after its event is stored): a cancel before it would
    // leave none to check.
    await pollUntil(
      'promote line',
      () => (lines().some((l) => l.workflowId === promoteId && l.event === 'promote') ? true : undefined),
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    await handle.cancel();
    await handle.result().catch(() => undefined);

    const all = lines();
    // Every line is a pino JSON object with a level and an ISO time.
    for (const l of all) {
      expect(l.level).toEqual(expect.any(Number));
      expect(String(l.time)).toMatch(/^\d{4}-\d\d-\d\dT/);
    }
    const of = (id: string, event: string) => all.filter((l) => l.workflowId === id && l.event === event);
    const ledger = env.sim.ledger();
    for (const [id, offer, gpu] of [
      [killId, slow, 'RTX 3060'],
      [promoteId, healthy, 'RTX 4090'],
    ] as const) {
      const instanceId = ledger.find((r) => r.offerId === offer.id)?.id;
      const rent = of(id, 'rent');
      expect(rent).toHaveLength(1);
      expect(rent[0]).toMatchObject({ msg: 'lifecycle rent', instanceId, machineId: offer.machine_id, gpu });
      expect(rent[0]?.dphUsd).toBeGreaterThan(0);
      const stages = of(id, 'stage').map((l) => l.stage);
      expect(stages).toEqual(expect.arrayContaining(['provisioning', 'waiting_running', 'paramfetch', 'benchmark']));
      // Stages after the rent carry the instance.
      expect(of(id, 'stage').find((l) => l.stage === 'benchmark')).toMatchObject({ instanceId, gpu });
    }
    expect(of(killId, 'kill')[0]).toMatchObject({ failureType: 'BenchRateBelowMin', destroyed: true, gpu: 'RTX 3060' });
    // The kill line says why and what it cost, as the CLI writes money.
    expect(of(killId, 'kill')[0]).toMatchObject({ cause: expect.stringContaining('the minimum of 29') });
    expect(of(killId, 'kill')[0]?.cost).toMatch(/^\$\d+\.\d{2,4}$/);
    expect(of(killId, 'kill')[0]?.costUsd).toBeGreaterThan(0);
    expect(of(promoteId, 'promote')[0]).toMatchObject({ gpu: 'RTX 4090', rateProofsPerHour: expect.any(Number) });
    // The operator's cancel of the promoted instance is a kill too (its line may land just after the close).
    await pollUntil(
      'kill line of the cancelled instance',
      () => (lines().some((l) => l.workflowId === promoteId && l.event === 'kill') ? true : undefined),
      {
        timeoutMs: 5000,
        intervalMs: 100,
      },
    );
    expect(readFileSync(logFile, 'utf8')).not.toContain(API_KEY);
  });
});
