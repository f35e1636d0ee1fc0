import type { Client } from '@temporalio/client';
import protoPkg from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPromoted } from '../helpers/expect-promoted.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { cancelAndWait } from '../helpers/cancel-and-wait.js';
import { expectCleanedUp, expectKilled } from '../helpers/expect-kill.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { hostWorkerAndDaemon } from '../helpers/host-processes.js';
import { simOffer } from '../helpers/offers.js';
import { pollUntil } from '../../infra/dev/poll.js';

const { temporal } = protoPkg;
const MIN_RATE = 29;

/**
 * A step the server hands to a host that never runs it: the GPU-host worker is frozen (SIGSTOP) with a
 * poll open, so the server matches the watch's next sampleDaemon to it and records it started, and the
 * host never heartbeats. This is what lost poll answers did to 7 healthy hosts in a 1000-host bench run.
 * A host that comes back (SIGCONT) gets the step once more; one that stays frozen is HostLost.
 */
const recovers = simOffer({ host: { proofSec: 100 } });
const hangs = simOffer({ host: { proofSec: 100 } });

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv([recovers, hangs]);
});
afterAll(async () => env?.close());

interface ActivityRun {
  name: string;
  started: boolean;
  completed: boolean;
  timeout: { type: string; heartbeatDetails: boolean } | null;
}

/** Each scheduled activity of the workflow's current run, in order, with how it ended. */
async function activityRuns(client: Client, workflowId: string): Promise<ActivityRun[]> {
  const { events } = await client.workflow.getHandle(workflowId).fetchHistory();
  const runs = new Map<string, ActivityRun>();
  for (const e of events ?? []) {
    const id = String(e.eventId);
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled)
      runs.set(id, { name: scheduled.activityType?.name ?? '', started: false, completed: false, timeout: null });
    const started = e.activityTaskStartedEventAttributes;
    if (started) runs.get(String(started.scheduledEventId))!.started = true;
    const completed = e.activityTaskCompletedEventAttributes;
    if (completed) runs.get(String(completed.scheduledEventId))!.completed = true;
    const timedOut = e.activityTaskTimedOutEventAttributes;
    if (timedOut) {
      const info = timedOut.failure?.timeoutFailureInfo;
      runs.get(String(timedOut.scheduledEventId))!.timeout = {
        type: temporal.api.enums.v1.TimeoutType[info?.timeoutType ?? 0] ?? 'unknown',
        heartbeatDetails: (info?.lastHeartbeatDetails?.payloads?.length ?? 0) > 0,
      };
    }
  }
  return [...runs.values()];
}

/** State of the workflow's pending sampleDaemon (SCHEDULED: in the queue; STARTED: handed to a poller). */
async function pendingSampleState(workflowId: string): Promise<string | undefined> {
  const { raw } = await env.client.workflow.getHandle(workflowId).describe();
  const pending = raw.pendingActivities?.find((a) => a.activityType?.name === 'sampleDaemon');
  const state = pending?.state;
  return state ? temporal.api.enums.v1.PendingActivityState[state]?.replace('PENDING_ACTIVITY_STATE_', '') : undefined;
}

/** Promoted, watched, and sampled at least once: the host is idle between samples with a poll open. */
async function promotedAndSampled(workflowId: string, offerId: number) {
  await env.client.workflow.start(instanceLifecycle, {
    taskQueue: env.taskQueue,
    workflowId,
    args: [fastRequest(offerId, { minRate: MIN_RATE, watch: { intervalSec: 2 } })],
    workflowExecutionTimeout: '5 minutes',
  });
  await expectPromoted(env.client, workflowId);
  await pollUntil(
    `${workflowId}: a completed sampleDaemon`,
    async () =>
      (await activityRuns(env.client, workflowId)).some((a) => a.name === 'sampleDaemon' && a.completed)
        ? true
        : undefined,
    { timeoutMs: 30_000 },
  );
  const inst = env.sim.ledger().find((r) => r.offerId === offerId);
  const worker = inst && hostWorkerAndDaemon(inst.id).worker;
  if (!worker) throw new Error(`no GPU-host worker for offer ${offerId}`);
  return worker.pid;
}

/**
 * Freezes the worker until the server hands it a sampleDaemon. If the freeze caught the worker between
 * two polls, the sample waits in the queue instead: thaw, let it run, and freeze again (at most 3 times).
 * Returns how many sampleDaemon runs the history held before the one handed to the frozen worker.
 */
async function freezeUntilHandedOut(workflowId: string, pid: number): Promise<number> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const before = (await activityRuns(env.client, workflowId)).filter((a) => a.name === 'sampleDaemon').length;
    process.kill(pid, 'SIGSTOP');
    await pollUntil(
      `${workflowId}: the next sampleDaemon scheduled`,
      async () => (await activityRuns(env.client, workflowId)).filter((a) => a.name === 'sampleDaemon')[before],
      { timeoutMs: 15_000, intervalMs: 50 },
    );
    // Matched to the open poll at once, or not at all. History writes an activity's started event only
    // when it closes: read the pending activity's state instead.
    await new Promise((r) => setTimeout(r, 1000));
    if ((await pendingSampleState(workflowId)) === 'STARTED') return before;
    process.kill(pid, 'SIGCONT');
    await pollUntil(
      `${workflowId}: the queued sampleDaemon done`,
      async () =>
        (await activityRuns(env.client, workflowId)).filter((a) => a.name === 'sampleDaemon')[before]?.completed
          ? true
          : undefined,
      { timeoutMs: 15_000 },
    );
  }
  throw new Error('the frozen worker never had a poll open when a sample was scheduled');
}

describe('a host step handed out but never started (lost dispatch)', () => {
  it(
    'runs once more when the host still answers, and the promoted host keeps being watched',
    { timeout: 150_000 },
    async () => {
      const id = `t-lost-dispatch-${recovers.id}`;
      const pid = await promotedAndSampled(id, recovers.id);
      const before = await freezeUntilHandedOut(id, pid);
      // The lost sample times out without a heartbeat and the workflow probes the host: thaw it now.
      await pollUntil(
        `${id}: the probe after the lost sample`,
        async () => {
          const runs = await activityRuns(env.client, id);
          const lost = runs.filter((a) => a.name === 'sampleDaemon')[before];
          return lost?.timeout && runs.slice(runs.indexOf(lost)).some((a) => a.name === 'inspectHost')
            ? true
            : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 50 },
      );
      process.kill(pid, 'SIGCONT');

      await pollUntil(
        `${id}: two more samples after the retried one`,
        async () => {
          const samples = (await activityRuns(env.client, id)).filter((a) => a.name === 'sampleDaemon');
          return samples.slice(before + 1).filter((a) => a.completed).length >= 2 ? true : undefined;
        },
        { timeoutMs: 30_000 },
      );
      const runs = await activityRuns(env.client, id);
      const lost = runs.filter((a) => a.name === 'sampleDaemon')[before]!;
      expect(lost).toMatchObject({ started: true, completed: false, timeout: { heartbeatDetails: false } });
      expect(['TIMEOUT_TYPE_HEARTBEAT', 'TIMEOUT_TYPE_START_TO_CLOSE']).toContain(lost.timeout?.type);
      const probe = runs.slice(runs.indexOf(lost)).find((a) => a.name === 'inspectHost');
      expect(probe?.completed).toBe(true);
      const events = await env.pool.query<{ stage: string; message: string }>(
        `SELECT stage, message FROM lifecycle_events WHERE workflow_id = $1 AND message LIKE '%never started%'`,
        [id],
      );
      expect(events.rows).toEqual([
        {
          stage: 'promoted',
          message: 'sampleDaemon was handed to the host but never started; the host answers, so it runs once more',
        },
      ]);
      const desc = await env.client.workflow.getHandle(id).describe();
      expect(desc.status.name).toBe('RUNNING');
      expect(desc.searchAttributes.Outcome).toEqual(['promoted']);

      await cancelAndWait(env.client, id);
      expectCleanedUp(env, recovers.id);
    },
  );

  it(
    'is HostLost when the host does not answer the probe either, and the instance is destroyed',
    { timeout: 150_000 },
    async () => {
      const id = `t-lost-dispatch-${hangs.id}`;
      const pid = await promotedAndSampled(id, hangs.id);
      const before = await freezeUntilHandedOut(id, pid);
      const k = await expectKilled(env, id, 'already-started', 'HostLost');
      // The lost step's own timeout is the reason, not the probe's.
      expect(k.details.stage).toBe('promoted');
      expect(['HEARTBEAT', 'START_TO_CLOSE']).toContain(k.details.timeoutType);
      const runs = await activityRuns(env.client, id);
      const lost = runs.filter((a) => a.name === 'sampleDaemon')[before]!;
      const probe = runs.slice(runs.indexOf(lost)).find((a) => a.name === 'inspectHost');
      // Left in the queue (SCHEDULE_TO_START) or handed to a second frozen poll (HEARTBEAT): never answered.
      expect(probe).toMatchObject({ completed: false });
      expect(['TIMEOUT_TYPE_SCHEDULE_TO_START', 'TIMEOUT_TYPE_HEARTBEAT']).toContain(probe?.timeout?.type);
      // The destroy's SIGKILL ends the frozen processes too.
      expectCleanedUp(env, hangs.id);
    },
  );
});
