import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevServer, freePort, startDevServer } from '../../infra/temporal/dev-server.js';
import { waitForPromotionRecorded } from '../../infra/dev/verdict.js';
import { expectPromoted } from '../helpers/expect-promoted.js';
import { instanceLifecycle } from '../../workflows/index.js';
import type { SimOffer } from '../../infra/sim/scenario.js';
import { cancelAndWait } from '../helpers/cancel-and-wait.js';
import { expectCleanedUp } from '../helpers/expect-kill.js';
import { benchProofs, expectOneRentEachAndNoneUnowned, waitForBenchmarkRunning } from '../helpers/fault-probes.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { hostProcesses } from '../helpers/host-processes.js';
import { simOffer } from '../helpers/offers.js';
import { pollUntil } from '../../infra/dev/poll.js';
import { recordHistory } from '../helpers/record-history.js';

/**
 * The Temporal server (persisted, same port) down for six times the host steps' 5 s heartbeat timeout
 * while hosts are mid-batch, while a batch completes and its benchmark deadline passes, and while a
 * promoted host is watched. What matters is the outage against the heartbeat timeout and the deadline
 * falling inside it, not absolute lengths (the issue's 60 s and 3 minute outages are the same case). The
 * hosts keep working and keep their results; every healthy host must end promoted on the batch it
 * proved, rented once, proving its batch once. SIM_TIME_SCALE=0.01: a 400 s proof takes 4 s.
 */
const MIN_RATE = 10;
const OUTAGE_MS = 30_000;

const dir = mkdtempSync(path.join(os.tmpdir(), 'fault-temporal-outage-'));
const dbFile = path.join(dir, 'temporal.db');
let port = 0;
let server: DevServer | null = null;
let env: FleetEnv | null = null;
const set = {
  longBatch: simOffer({ host: { proofSec: 400 } }),
  deadline: simOffer({ host: { proofSec: 400 } }),
  watched: simOffer({ host: { proofSec: 100 } }),
};

beforeAll(async () => {
  port = await freePort();
  server = await startDevServer({ dbFile, port, headless: true });
  env = await startFleetEnv([set.longBatch, set.deadline, set.watched], { temporalAddress: server.address });
});

afterAll(async () => {
  await env?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function outage(ms: number): Promise<number> {
  if (!server) throw new Error('no server');
  await server.stop();
  server = null;
  await new Promise((r) => setTimeout(r, ms));
  server = await startDevServer({ dbFile, port, headless: true });
  return Date.now();
}

async function eventsLike(fleet: FleetEnv, workflowId: string, like: string): Promise<string[]> {
  const r = await fleet.pool.query<{ message: string }>(
    `SELECT message FROM lifecycle_events WHERE workflow_id = $1 AND message LIKE $2`,
    [workflowId, like],
  );
  return r.rows.map((x) => x.message);
}

async function survives(outageMs: number, s: { longBatch: SimOffer; deadline: SimOffer; watched: SimOffer }) {
  const fleet = env;
  if (!fleet) throw new Error('no fleet');
  const tag = Math.round(outageMs / 1000);
  const ids = {
    long: `t-tout${tag}-long-${s.longBatch.id}`,
    deadline: `t-tout${tag}-deadline-${s.deadline.id}`,
    watched: `t-tout${tag}-watched-${s.watched.id}`,
  };
  const start = (id: string, offerId: number, proofs: number, watchSec?: number, benchmarkSec = 900) =>
    fleet.client.workflow.start(instanceLifecycle, {
      taskQueue: fleet.taskQueue,
      workflowId: id,
      args: [
        fastRequest(offerId, {
          benchmarkProofs: proofs,
          minRate: MIN_RATE,
          earlyStopAfterProofs: 0,
          ...(watchSec ? { watch: { intervalSec: watchSec } } : {}),
          // 900 s: far past the outage, only the host's own health may decide. Heartbeat timeout stays 5 s.
          timeouts: { benchmarkSec, proofDeadlineSec: 60 },
        }),
      ],
      workflowExecutionTimeout: '20 minutes',
    });
  await start(ids.watched, s.watched.id, 4, 2);
  await expectPromoted(fleet.client, ids.watched, 120_000);
  // The long batch (28 proofs, 2 at a time: 56 s) outlives the outage. The deadline one (10: 20 s, against
  // a 26 s deadline it meets when heard) ends inside it, and its deadline passes inside it too.
  await start(ids.long, s.longBatch.id, 28);
  await start(ids.deadline, s.deadline.id, 10, undefined, 26);
  await Promise.all([
    waitForBenchmarkRunning(fleet.client, ids.long, 120_000, 1),
    waitForBenchmarkRunning(fleet.client, ids.deadline, 120_000, 1),
  ]);

  const restartedAt = await outage(outageMs);

  for (const id of [ids.long, ids.deadline]) {
    await expectPromoted(fleet.client, id, 120_000);
  }
  // The watched host goes on being watched: samples after the outage, still promoted.
  await pollUntil(
    `${ids.watched} sampled after the outage`,
    async () => {
      const desc = await fleet.client.workflow.getHandle(ids.watched).describe();
      if (desc.status.name !== 'RUNNING') throw new Error(`${ids.watched} ended ${desc.status.name}`);
      const { events } = await fleet.client.workflow.getHandle(ids.watched).fetchHistory();
      const sampled = (events ?? []).some(
        (e) => e.activityTaskCompletedEventAttributes && Number(e.eventTime?.seconds ?? 0) * 1000 > restartedAt - 1000,
      );
      return sampled || undefined;
    },
    { timeoutMs: 60_000 },
  );
  for (const id of Object.values(ids)) {
    // The Outcome attribute is upserted after the promoted stage and its record, in a later workflow task.
    await waitForPromotionRecorded(fleet.client, fleet.pool, id);
    const desc = await fleet.client.workflow.getHandle(id).describe();
    expect(desc.status.name, id).toBe('RUNNING');
    expect(desc.searchAttributes.Outcome, id).toEqual(['promoted']);
    expect(desc.searchAttributes.FailureType ?? [], id).toEqual([]);
  }
  // Each batch was proven once: the resumed step re-attached to it or collected its report.
  for (const [id, offer, proofs] of [
    [ids.long, s.longBatch, 28],
    [ids.deadline, s.deadline, 10],
  ] as const) {
    const inst = fleet.sim.ledger().find((r) => r.offerId === offer.id);
    const workDir = inst && hostProcesses(inst.id)[0]?.workDir;
    if (!workDir) throw new Error(`no host for ${id}`);
    expect(benchProofs(workDir, id), `${id} bench proofs`).toEqual({ accepted: proofs, completed: proofs });
  }
  // The outage outlasted every heartbeat timeout: the steps in flight were collected, not declared lost.
  const resumed = await Promise.all(
    [ids.long, ids.deadline].map((id) => eventsLike(fleet, id, '%timed out at the server%')),
  );
  expect(resumed.flat().length, 'steps collected after timing out at the server').toBeGreaterThan(0);
  // The deadline passed while nobody listened: no evidence, so the kept batch decided.
  expect(await eventsLike(fleet, ids.deadline, 'benchmark deadline not heard%')).toHaveLength(1);

  await expectOneRentEachAndNoneUnowned(fleet.client, fleet.sim, Object.values(ids));
  for (const id of Object.values(ids)) await cancelAndWait(fleet.client, id);
  for (const o of [s.longBatch, s.deadline, s.watched]) expectCleanedUp(fleet, o.id);
  await recordHistory(fleet.client, ids.long, `killed-CancelledByOperator-temporal-outage-${tag}s-${s.longBatch.id}`);
  await recordHistory(fleet.client, ids.deadline, `killed-CancelledByOperator-deadline-unheard-${s.deadline.id}`);
}

// An external TEMPORAL_ADDRESS is not ours to stop.
describe.skipIf(Boolean(process.env.TEMPORAL_ADDRESS))('a Temporal server outage of many heartbeat timeouts', () => {
  it(
    'every healthy host ends promoted, a deadline inside the outage included; one rent each, nothing left running',
    { timeout: 420_000 },
    () => survives(OUTAGE_MS, set),
  );
});
