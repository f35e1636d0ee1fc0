import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreActivities, type StoreActivityDeps } from '../../activities/store/activities.js';
import { liveStatus } from '../../workers/cli/status.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { expectCleanedUp, expectKilled } from '../helpers/expect-kill.js';
import { expectPromoted } from '../helpers/expect-promoted.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { cancelAndWait } from '../helpers/cancel-and-wait.js';
import { simOffer } from '../helpers/offers.js';

const MIN_RATE = 29;

// One offer per failure mode of the seeds, each injected through the simulators.
const o = {
  timeout: simOffer({ host: { proofSec: 400 } }),
  transport: simOffer({ host: { faults: { transportDrops: 3 } } }),
  transportOnce: simOffer({ host: { faults: { transportDrops: 1 } } }),
  oom: simOffer({ cpu_ram: 128_000, host: { faults: { oomOnPceAbovePartitionWorkers: 1 } } }),
  crash: simOffer({ host: { faults: { crashAfterProofs: 3 } } }),
  neverReady: simOffer({ host: { faults: { neverReady: true } } }),
  proofFailed: simOffer({ host: { faults: { failProofs: true } } }),
  paramFail: simOffer({ host: { faults: { paramfetch: 'fail' } } }),
  paramStall: simOffer({ host: { faults: { paramfetch: 'stall' } } }),
  exited: simOffer({ instance: { fate: 'exited' } }),
  stuck: simOffer({ instance: { fate: 'stuck_loading' } }),
  taken: simOffer(),
  preempted: simOffer({ host: { proofSec: 300 } }),
};

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv(Object.values(o));
});
afterAll(async () => env?.close());

type Diag = {
  exitCode: number | null;
  signal: string | null;
  daemonLogTail: string;
  outputTail?: string;
  grpcMessage?: string;
};

describe('every failure of the seeds is typed, carries evidence, and cleans up', () => {
  it('BenchmarkTimeout: the workflow timer fires before the batch ends', async () => {
    const k = await expectKilled(
      env,
      `t-timeout-${o.timeout.id}`,
      fastRequest(o.timeout.id, { minRate: MIN_RATE, timeouts: { benchmarkSec: 5 } }),
      'BenchmarkTimeout',
    );
    expect(k.details.requested).toBe(4);
    expect(k.details.completed).toBeLessThan(4);
    expect(k.details.elapsedMs).toBeGreaterThanOrEqual(4000);
    expect(k.details.expectedMs).toBeGreaterThan(0);
    expectCleanedUp(env, o.timeout.id);
  });

  it('DaemonTransportError: a stream that keeps dropping after restarts is not a slow GPU', async () => {
    const k = await expectKilled(
      env,
      `t-transport-${o.transport.id}`,
      fastRequest(o.transport.id, { minRate: MIN_RATE }),
      'DaemonTransportError',
    );
    const diag = k.details.diagnostics as Diag;
    expect(diag.grpcMessage).toMatch(/UNAVAILABLE|UNKNOWN|INTERNAL|Connection|reset|closed/i);
    expect(diag.daemonLogTail).toContain('connection reset');
    expect(diag.daemonLogTail).not.toContain('\x1b[');
    expectCleanedUp(env, o.transport.id);
  });

  it('a single dropped stream is cured by one daemon restart (the seeds remedy)', async () => {
    const id = `t-transport-once-${o.transportOnce.id}`;
    const handle = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: id,
      args: [fastRequest(o.transportOnce.id, { minRate: MIN_RATE })],
      workflowExecutionTimeout: '5 minutes',
    });
    await expectPromoted(env.client, id);
    await cancelAndWait(env.client, handle.workflowId);
    const ev = await env.pool.query(
      "SELECT count(*)::int AS n FROM lifecycle_events WHERE workflow_id = $1 AND message LIKE 'transport error%'",
      [id],
    );
    expect(ev.rows[0]?.n).toBe(1);
  });

  it('DaemonOOM: making the PCE with too many workers on a low-RAM host', async () => {
    const k = await expectKilled(env, `t-oom-${o.oom.id}`, fastRequest(o.oom.id, { minRate: MIN_RATE }), 'DaemonOOM');
    const diag = k.details.diagnostics as Diag;
    expect(diag.signal).toBe('SIGKILL');
    expect(diag.daemonLogTail).toContain('no PCE cache');
    expect(k.details.stage).toBe('warmup');
    expectCleanedUp(env, o.oom.id);
    const bad = await env.pool.query('SELECT reason FROM bad_machines WHERE machine_id = $1', [o.oom.machine_id]);
    expect(bad.rows[0]?.reason).toMatch(/DaemonOOM/);
  });

  it('DaemonCrashed: a panic mid-benchmark reports its exit code and log', async () => {
    const k = await expectKilled(
      env,
      `t-crash-${o.crash.id}`,
      fastRequest(o.crash.id, { minRate: MIN_RATE }),
      'DaemonCrashed',
    );
    const diag = k.details.diagnostics as Diag;
    expect(diag.exitCode).toBe(101);
    expect(diag.daemonLogTail).toContain('panicked');
    expect(k.details.stage).toBe('benchmark');
    expectCleanedUp(env, o.crash.id);
  });

  it('DaemonNeverReady: GetStatus never answers after start', async () => {
    const k = await expectKilled(
      env,
      `t-ready-${o.neverReady.id}`,
      fastRequest(o.neverReady.id, { timeouts: { daemonReadySec: 3 } }),
      'DaemonNeverReady',
    );
    expect((k.details.diagnostics as Diag).daemonLogTail).toContain('loading SRS');
    expectCleanedUp(env, o.neverReady.id);
  });

  it('ProofFailed: the daemon answers FAILED with its error message', async () => {
    const k = await expectKilled(env, `t-proof-${o.proofFailed.id}`, fastRequest(o.proofFailed.id), 'ProofFailed');
    expect(k.details.errorMessage).toContain('self-verification');
    expectCleanedUp(env, o.proofFailed.id);
  });

  it('ParamfetchFailed: the fetch exits with an error', async () => {
    const k = await expectKilled(env, `t-pf-${o.paramFail.id}`, fastRequest(o.paramFail.id), 'ParamfetchFailed');
    expect(k.details.stalled).toBe(false);
    expect((k.details.diagnostics as Diag).outputTail).toContain('checksum mismatch');
    expectCleanedUp(env, o.paramFail.id);
  });

  it('ParamfetchFailed (stalled): no progress for the stall window', async () => {
    const k = await expectKilled(
      env,
      `t-pfs-${o.paramStall.id}`,
      fastRequest(o.paramStall.id, { timeouts: { paramfetchStallSec: 2 } }),
      'ParamfetchFailed',
    );
    expect(k.details.stalled).toBe(true);
    expectCleanedUp(env, o.paramStall.id);
  });

  it('InstanceNeverRunning: the container exited before running', async () => {
    const k = await expectKilled(env, `t-exit-${o.exited.id}`, fastRequest(o.exited.id), 'InstanceNeverRunning');
    expect(k.details.actualStatus).toBe('exited');
    expect(String(k.details.statusMsg)).toContain('OCI runtime');
    expectCleanedUp(env, o.exited.id);
  });

  it('InstanceNeverRunning: stuck loading past its deadline', async () => {
    const k = await expectKilled(
      env,
      `t-stuck-${o.stuck.id}`,
      fastRequest(o.stuck.id, { timeouts: { waitRunningSec: 3 } }),
      'InstanceNeverRunning',
    );
    expect(k.details.actualStatus).toBe('loading');
    expectCleanedUp(env, o.stuck.id);
  });

  it('OfferUnavailable: the offer was taken; nothing is rented or retried', async () => {
    await fetch(`${env.sim.url}/_sim/offers/${o.taken.id}/take`, { method: 'POST' });
    const k = await expectKilled(env, `t-taken-${o.taken.id}`, fastRequest(o.taken.id), 'OfferUnavailable');
    expect(k.failure.message).toContain(String(o.taken.id));
    expectCleanedUp(env, o.taken.id, false);
    const hist = await env.client.workflow.getHandle(k.workflowId).fetchHistory();
    const attempts = hist.events
      ?.filter((e) => e.activityTaskStartedEventAttributes)
      .map((e) => e.activityTaskStartedEventAttributes?.attempt);
    // Nothing retried: every activity ran once.
    expect(attempts?.every((a) => a === 1)).toBe(true);
    // The lifecycle's store calls are activities of their own (its records, queued beside it); the rest:
    // the rent once, then the kill path's sweep of the lifecycle's label, then the kill's notification.
    const store = new Set(Object.keys(createStoreActivities({} as StoreActivityDeps)));
    const scheduled = hist.events
      ?.filter((e) => e.activityTaskScheduledEventAttributes)
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? '')
      .filter((name) => !store.has(name));
    expect(scheduled).toEqual(['rentOffer', 'destroyLabelled', 'notify']);
    expect(attempts?.length).toBe((hist.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes).length);
  });

  it('HostLost: the host vanishes mid-benchmark (heartbeats stop)', async () => {
    const handle = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: `t-lost-${o.preempted.id}`,
      args: [fastRequest(o.preempted.id, { minRate: MIN_RATE, timeouts: { heartbeatSec: 3 } })],
      workflowExecutionTimeout: '3 minutes',
    });
    const { lifecycleStatusQuery } = await import('../../workflows/index.js');
    let stage = '';
    for (let i = 0; i < 600 && stage !== 'benchmark'; i++) {
      stage = (await handle.query(lifecycleStatusQuery)).stage;
      expect(stage).not.toMatch(/^kill/);
      await new Promise((r) => setTimeout(r, 100));
    }
    // Live progress: the status query merged with the batch's heartbeat, as `cli status` prints it.
    let live = await liveStatus(env.client, handle.workflowId);
    for (let i = 0; i < 100 && live.activity?.type !== 'runBenchmark'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      live = await liveStatus(env.client, handle.workflowId);
    }
    expect(live.stage).toBe('benchmark');
    expect(live.stageDeadline).not.toBeNull();
    expect(live.activity?.type).toBe('runBenchmark');
    const inst = env.sim.ledger().find((r) => r.offerId === o.preempted.id);
    await fetch(`${env.sim.url}/_sim/instances/${inst?.id}/preempt`, { method: 'POST' });
    const k = await expectKilled(env, handle.workflowId, 'already-started', 'HostLost');
    expect(k.details.timeoutType).toBe('HEARTBEAT');
    expectCleanedUp(env, o.preempted.id);
  });
});

describe('Vast API errors', () => {
  it('VastApiError: a rejected API key fails at once, without retries', async () => {
    const offer = simOffer();
    const bad = await startFleetEnv([offer], { workerApiKey: 'wrong-key' });
    try {
      const k = await expectKilled(bad, `t-auth-${offer.id}`, fastRequest(offer.id), 'VastApiError');
      expect(k.failure.message).toMatch(/API key/);
      expect(JSON.stringify(k.details)).not.toContain('wrong-key');
      expectCleanedUp(bad, offer.id, false);
    } finally {
      await bad.close();
    }
  });
});
