import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { waitForVerdict } from '../../workers/cli/verdict.js';
import { ensureScalerSchedule } from '../../workers/schedules.js';
import { lifecycleWorkflowId } from '../../workflows/task-queues.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { simOffer } from '../helpers/offers.js';

const run = promisify(execFile);
const MODEL = `CLI-GPU-${Date.now()}`;
const offer = simOffer({ gpu_name: MODEL, host: { proofSec: 100 } });
const other = simOffer({ gpu_name: MODEL, dph_total: 0.3 });

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv([offer, other]);
});
afterAll(async () => env?.close());

/** Runs the real CLI as an operator would, against the test server and worker queue. */
async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'workers/cli.ts', ...args], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        CONTROL_TASK_QUEUE: env.taskQueue,
        USER: 'tester',
      },
    });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}

describe('operator CLI, end to end through Temporal', () => {
  it('prints help, and rejects bad arguments naming the field', async () => {
    const help = await cli('--help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(
      /fleet status[\s\S]*offers[\s\S]*machines bad\|ignore\|unignore[\s\S]*schedule pause\|resume\|trigger/,
    );
    const bad = await cli('deploy', 'abc');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('offerId must be a positive integer, got abc');
    expect((await cli('machines', 'ignore', '12')).err).toContain('--reason is required');
    expect((await cli('frobnicate')).err).toContain('unknown command frobnicate');
  });

  it('deploys, shows fleet status and live status, promotes by override, exports and replays, and kills', async () => {
    // A lenient bar keeps the verdict fast; the override signal still lands in history.
    const dep = await cli('deploy', String(offer.id), '--min-rate', String(29 / 0.01));
    expect(dep.code, dep.err).toBe(0);
    const id = lifecycleWorkflowId(offer.id);
    expect(dep.out).toContain(id);
    expect((await cli('promote', id, '--reason', 'trusted host')).code).toBe(0);
    expect(await waitForVerdict(env.client, id)).toBe('promoted');

    const fleet = await cli('fleet', 'status');
    expect(fleet.out).toContain(id);
    expect(fleet.out).toContain(`${offer.num_gpus}x ${MODEL}`);
    expect(fleet.out).toContain('promoted');
    const status = JSON.parse((await cli('status', id)).out) as { stage: string; instanceId: number };
    expect(status.stage).toBe('promoted');
    expect(status.instanceId).toBeGreaterThan(0);

    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cli-')), 'run.json');
    expect((await cli('history', 'export', id, file)).out).toMatch(/wrote \d+ events/);
    const replay = await cli('replay', file);
    expect(replay.code, replay.err).toBe(0);
    expect(replay.out).toContain('OK');
    const history = await env.client.workflow.getHandle(id).fetchHistory();
    expect(
      history.events?.some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'promoteOverride'),
    ).toBe(true);

    expect((await cli('kill', id)).code).toBe(0);
    await expect(env.client.workflow.getHandle(id).result()).rejects.toThrow();
    expect(env.sim.ledger().find((l) => l.offerId === offer.id)).toMatchObject({ destroyed: true });
  });

  it('lists offers ranked with the performance overlay, and manages machines through workflows', async () => {
    const offers = await cli('offers', '--gpu', MODEL);
    expect(offers.code, offers.err).toBe(0);
    expect(offers.out).toContain(String(other.id));

    const bad = await cli('machines', 'bad', String(other.machine_id), '--reason', 'burnt VRAM');
    expect(bad.code, bad.err).toBe(0);
    const row = await env.pool.query('SELECT source, reason, ignored FROM bad_machines WHERE machine_id = $1', [
      other.machine_id,
    ]);
    expect(row.rows[0]).toMatchObject({ source: 'operator', reason: 'tester: burnt VRAM', ignored: false });
    expect((await cli('offers', '--gpu', MODEL)).out).not.toContain(String(other.id));

    expect((await cli('machines', 'ignore', String(other.machine_id), '--reason', 'fixed')).code).toBe(0);
    expect(
      (await env.pool.query('SELECT ignored FROM bad_machines WHERE machine_id = $1', [other.machine_id])).rows[0]
        ?.ignored,
    ).toBe(true);
    expect((await cli('offers', '--gpu', MODEL)).out).toContain(String(other.id));
    expect((await cli('machines', 'unignore', String(other.machine_id), '--reason', 'again')).code).toBe(0);
    expect((await cli('machines', 'ignore', '999999999', '--reason', 'x')).code).toBe(1);
  });

  it('sets up both schedules idempotently', async () => {
    const first = await cli(
      'schedule',
      'setup',
      '--target-rate',
      '100',
      '--max-dph',
      '3',
      '--every',
      '3600',
      '--gpu',
      MODEL,
    );
    expect(first.code, first.err).toBe(0);
    expect(first.out).toContain('fleet-scaler schedule created, orphan-reconciler schedule created');
    const again = await cli('schedule', 'setup', '--target-rate', '150', '--every', '1800');
    expect(again.out).toContain('fleet-scaler schedule updated, orphan-reconciler schedule updated');
    const desc = await env.client.schedule.getHandle('fleet-scaler').describe();
    expect(desc.policies.overlap).toBe('SKIP');
    const action = desc.action as { args?: Array<{ targetRate: number }> };
    expect(action.args?.[0]?.targetRate).toBe(150);
    expect((await cli('schedule', 'setup', '--max-dph=-1')).err).toContain('--max-dph must be a number >= 0');
    const unknown = await cli('schedule', 'setup', '--max-dollars', '3');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("Unknown option '--max-dollars'");
    await env.client.schedule.getHandle('fleet-scaler').delete();
    await env.client.schedule.getHandle('orphan-reconciler').delete();
  });

  it('pauses, resumes and triggers schedules', async () => {
    const scheduleId = `cli-schedule-${offer.id}`;
    await ensureScalerSchedule(env.client, {
      scheduleId,
      intervalSec: 3600,
      taskQueue: env.taskQueue,
      paused: false,
      input: {
        targetRate: 0,
        maxDph: 0,
        maxInstances: 0,
        maxConcurrentBenchmarks: 0,
        explorationSlots: 0,
        minRate: 1,
        offerCheckSec: 1,
        filter: { gpuModels: [MODEL], minRamMb: 1, minReliability: 0, minCuda: 0, maxOfferDph: 1 },
        lifecycle: { timeouts: fastRequest(1).timeouts },
      },
    });
    const handle = env.client.schedule.getHandle(scheduleId);
    expect((await cli('schedule', 'pause', scheduleId)).code).toBe(0);
    expect((await handle.describe()).state.paused).toBe(true);
    expect((await cli('schedule', 'resume', scheduleId)).code).toBe(0);
    expect((await handle.describe()).state.paused).toBe(false);
    expect((await cli('schedule', 'trigger', scheduleId)).code).toBe(0);
    for (let i = 0; i < 50 && (await handle.describe()).info.recentActions.length === 0; i++)
      await new Promise((r) => setTimeout(r, 200));
    expect((await handle.describe()).info.recentActions.length).toBeGreaterThan(0);
    await handle.delete();
  });
});
