import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPromoted } from '../helpers/expect-promoted.js';
import type { SimOffer } from '../../infra/sim/scenario.js';
import { DEFAULT_TIMEOUTS } from '../../workflows/domain/policy/defaults.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { cancelAndWait } from '../helpers/cancel-and-wait.js';
import { expectCleanedUp } from '../helpers/expect-kill.js';
import {
  activityCompletedAt,
  benchProofs,
  expectOneRentEachAndNoneUnowned,
  waitForBenchmarkRunning,
} from '../helpers/fault-probes.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { hostProcesses, processAlive } from '../helpers/host-processes.js';
import { simOffer } from '../helpers/offers.js';
import { pollUntil } from '../../infra/dev/poll.js';
import { startTestCluster, type TestCluster } from './cluster-fixture.js';

/**
 * Losing server processes of the two-node cluster while hosts prove. The control worker speaks mTLS
 * through the front's pass-through; each rented host dials the host listener with its API key. One
 * node killed (-9) mid-benchmark: the other takes over its shards and the lifecycle goes on. Both nodes
 * down for 60 s and for 3 minutes: every lifecycle's end is asserted after they come back.
 * SIM_TIME_SCALE=0.01: a 400 s proof takes 4 s.
 */
const MIN_RATE = 10;
// Test-side room for host start-up on a loaded 2-core machine (a simulated host is several tsx processes).
const ROOM = { hostConnectSec: 120, paramfetchSec: 120, paramfetchStallSec: 30, daemonReadySec: 60 };

const takeover = simOffer({ host: { proofSec: 400 } });
const outages = [60_000, 180_000].map((ms) => ({
  ms,
  longBatch: simOffer({ host: { proofSec: 400 } }),
  shortBatch: simOffer({ host: { proofSec: 400 } }),
}));

let t: TestCluster;
let env: FleetEnv;
beforeAll(async () => {
  t = await startTestCluster('cl_faults');
  env = await startFleetEnv([takeover, ...outages.flatMap((o) => [o.longBatch, o.shortBatch])], {
    temporalAddress: t.cluster.front.controlAddress,
    temporalTls: t.controlTls,
    security: { ...t.controlSecurity, ...t.hostSettings },
  });
});
afterAll(async () => {
  await env?.close();
  await t?.stop();
});

async function hostOf(fleet: FleetEnv, offer: SimOffer, id: string) {
  const inst = fleet.sim.ledger().find((r) => r.offerId === offer.id);
  const proc = inst && hostProcesses(inst.id)[0];
  if (!inst || !proc) throw new Error(`no host for ${id}`);
  return { instanceId: inst.id, workDir: proc.workDir };
}

async function expectNothingLeft(fleet: FleetEnv, ids: string[], offers: SimOffer[]) {
  for (const id of ids) await cancelAndWait(fleet.client, id);
  for (const o of offers) expectCleanedUp(fleet, o.id);
  const instances = fleet.sim.ledger().filter((r) => offers.some((o) => o.id === r.offerId));
  await pollUntil(
    'every host process of these instances gone',
    () => (instances.every((i) => hostProcesses(i.id).length === 0) ? true : undefined),
    { timeoutMs: 15_000 },
  );
}

describe('a two-node Temporal cluster losing server processes', () => {
  it(
    'kill -9 of the node owning the lifecycle mid-benchmark: the other takes its shard and carries it to promoted, one rent, nothing left',
    { timeout: 300_000 },
    async () => {
      const id = `t-cluster-kill-${takeover.id}`;
      await env.client.workflow.start(instanceLifecycle, {
        taskQueue: env.taskQueue,
        workflowId: id,
        args: [
          fastRequest(takeover.id, {
            benchmarkProofs: 8,
            minRate: MIN_RATE,
            earlyStopAfterProofs: 0,
            // Production heartbeat timing: a takeover of seconds must not read as a lost host.
            timeouts: { ...ROOM, heartbeatSec: DEFAULT_TIMEOUTS.heartbeatSec, benchmarkSec: 300, proofDeadlineSec: 60 },
          }),
        ],
        workflowExecutionTimeout: '10 minutes',
      });
      await waitForBenchmarkRunning(env.client, id, 120_000, 1);
      const { runId } = await env.client.workflow.getHandle(id).describe();
      // The node whose history service owns the lifecycle's shard: its loss is a takeover, for certain.
      const owner = await t.shardOwner(id);
      const victim = t.cluster.nodes.find((n) => t.historyAddress(n) === owner);
      const survivor = t.cluster.nodes.find((n) => n !== victim);
      if (!victim || !survivor) throw new Error(`shard owner ${owner} is none of the nodes`);
      const victimPid = victim.pid;
      const killedAt = Date.now();
      await victim.kill();
      expect(victimPid !== null && processAlive(victimPid), 'killed node still running').toBe(false);

      await expectPromoted(env.client, id, 180_000);
      expect(survivor.pid !== null && processAlive(survivor.pid), 'surviving node alive').toBe(true);
      const desc = await env.client.workflow.getHandle(id).describe();
      expect(desc.runId).toBe(runId);
      expect(desc.status.name).toBe('RUNNING');
      expect(desc.searchAttributes.FailureType ?? []).toEqual([]);
      const { workDir } = await hostOf(env, takeover, id);
      expect(benchProofs(workDir, id), 'bench proofs').toEqual({ accepted: 8, completed: 8 });
      await expectOneRentEachAndNoneUnowned(env.client, env.sim, [id]);

      // The survivor took the shard over, and recorded the batch's result after the kill.
      expect(await t.shardOwner(id)).toBe(t.historyAddress(survivor));
      const benchDone = await activityCompletedAt(env.client, id, 'runBenchmark');
      expect(benchDone?.getTime(), 'benchmark recorded after the kill').toBeGreaterThan(killedAt);

      // The killed node comes back as a new member session, beside the survivor: two nodes again.
      const restartedAt = new Date();
      await victim.restart();
      await pollUntil(
        'the restarted node in the membership',
        async () => ((await t.liveMembers(restartedAt)).history?.length === 1 ? true : undefined),
        { timeoutMs: 60_000 },
      );
      expect((await t.liveMembers()).history).toHaveLength(2);
      await expectNothingLeft(env, [id], [takeover]);
    },
  );

  for (const o of outages) {
    const tag = Math.round(o.ms / 1000);
    it(
      `both nodes stopped for ${tag} s mid-benchmark and restarted: every lifecycle ends promoted, one rent each, nothing left`,
      { timeout: o.ms + 300_000 },
      async () => {
        const ids = {
          long: `t-cluster-out${tag}-long-${o.longBatch.id}`,
          short: `t-cluster-out${tag}-short-${o.shortBatch.id}`,
        };
        const start = (wid: string, offerId: number, proofs: number) =>
          env.client.workflow.start(instanceLifecycle, {
            taskQueue: env.taskQueue,
            workflowId: wid,
            args: [
              fastRequest(offerId, {
                benchmarkProofs: proofs,
                minRate: MIN_RATE,
                earlyStopAfterProofs: 0,
                // Benchmark deadline far past the outage: only the host's own health may decide. The 15 s
                // heartbeat timeout is far below it, so the steps in flight time out at the server and must
                // be collected, not re-run; the probe that finds the host answering has 2 x 15 s to reach
                // it, as the host worker reconnects through the front with the SDK's backoff (a 5 s
                // heartbeat's 10 s was too short once on this loaded machine: HostLost).
                timeouts: { ...ROOM, heartbeatSec: 15, benchmarkSec: 900, proofDeadlineSec: 60 },
              }),
            ],
            workflowExecutionTimeout: '20 minutes',
          });
        // The long batch (40 proofs, 2 at a time: 80 s) outlives a 60 s outage; the short one (8: 16 s) ends inside it.
        await start(ids.long, o.longBatch.id, 40);
        await start(ids.short, o.shortBatch.id, 8);
        await Promise.all([
          waitForBenchmarkRunning(env.client, ids.long, 120_000, 1),
          waitForBenchmarkRunning(env.client, ids.short, 120_000, 1),
        ]);

        await Promise.all(t.cluster.nodes.map((n) => n.stop()));
        await new Promise((r) => setTimeout(r, o.ms));
        await Promise.all(t.cluster.nodes.map((n) => n.restart()));

        for (const id of Object.values(ids)) {
          await expectPromoted(env.client, id, 240_000);
          const desc = await env.client.workflow.getHandle(id).describe();
          expect(desc.status.name, id).toBe('RUNNING');
          expect(desc.searchAttributes.FailureType ?? [], id).toEqual([]);
        }
        // Each batch was proven once: the resumed step re-attached to it or collected its report.
        for (const [id, offer, proofs] of [
          [ids.long, o.longBatch, 40],
          [ids.short, o.shortBatch, 8],
        ] as const) {
          const { workDir } = await hostOf(env, offer, id);
          expect(benchProofs(workDir, id), `${id} bench proofs`).toEqual({ accepted: proofs, completed: proofs });
        }
        // The outage outlasted every heartbeat timeout: the steps in flight were collected from the hosts.
        const collected = await env.pool.query<{ n: string }>(
          `SELECT count(*) AS n FROM lifecycle_events
            WHERE workflow_id = ANY($1) AND message LIKE '%timed out at the server%'`,
          [Object.values(ids)],
        );
        expect(Number(collected.rows[0]?.n), 'steps collected after timing out at the server').toBeGreaterThan(0);
        await expectOneRentEachAndNoneUnowned(env.client, env.sim, Object.values(ids));
        await expectNothingLeft(env, Object.values(ids), [o.longBatch, o.shortBatch]);
      },
    );
  }
});
