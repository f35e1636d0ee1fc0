import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type DevServer, freePort, startDevServer } from '../../infra/temporal/dev-server.js';
import { expectPromoted } from '../helpers/expect-promoted.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { cancelAndWait } from '../helpers/cancel-and-wait.js';
import { expectCleanedUp } from '../helpers/expect-kill.js';
import {
  activityCompletedAt,
  expectOneRentEachAndNoneUnowned,
  faultSeed,
  seededInt,
  waitForBenchmarkRunning,
} from '../helpers/fault-probes.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { hostProcesses, hostWorkerAndDaemon, processAlive } from '../helpers/host-processes.js';
import { simOffer } from '../helpers/offers.js';
import { pollUntil } from '../../infra/dev/poll.js';

// A healthy host with a batch long enough (8 proofs, 2 at a time, 4 s each) to take the server down inside it.
const PROOFS = 8;
const offer = simOffer({ host: { proofSec: 400 } });
const seed = faultSeed();
const stopAfterProofs = seededInt(seed, 'temporal-restart', 0, 2);

function tcpConnects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'fault-temporal-'));
let server: DevServer | null = null;
let env: FleetEnv | null = null;

afterAll(async () => {
  await env?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

// An external TEMPORAL_ADDRESS is not ours to restart.
describe.skipIf(Boolean(process.env.TEMPORAL_ADDRESS))(`Temporal server restart (seed ${seed})`, () => {
  it(
    `mid-benchmark (after ${stopAfterProofs} proofs): workers reconnect on their own and the lifecycle finishes, one rent`,
    { timeout: 150_000 },
    async () => {
      // A server of this test's own, persisted in SQLite on a fixed port, so it can come back as the same server.
      const dbFile = path.join(dir, 'temporal.db');
      const port = await freePort();
      server = await startDevServer({ dbFile, port, headless: true });
      const address = server.address;
      env = await startFleetEnv([offer], { temporalAddress: address });
      const fleet = env;

      const id = `t-fault-temporal-${offer.id}`;
      await fleet.client.workflow.start(instanceLifecycle, {
        taskQueue: fleet.taskQueue,
        workflowId: id,
        // The outage must stay under the heartbeat timeout, or the host would rightly count as lost.
        args: [fastRequest(offer.id, { benchmarkProofs: PROOFS, timeouts: { heartbeatSec: 30, benchmarkSec: 120 } })],
        workflowExecutionTimeout: '5 minutes',
      });
      await waitForBenchmarkRunning(fleet.client, id, 60_000, stopAfterProofs);
      const inst = fleet.sim.ledger().find((r) => r.offerId === offer.id);
      if (!inst) throw new Error('no instance rented');
      const { worker: hostWorker } = hostWorkerAndDaemon(inst.id);
      if (!hostWorker) throw new Error(`GPU-host worker not found: ${JSON.stringify(hostProcesses(inst.id))}`);

      const { runId } = await fleet.client.workflow.getHandle(id).describe();
      const firstPid = server.pid;
      const stoppedAt = Date.now();
      await server.stop();
      server = null;
      // Down for real (a raw connect: the client's own retries would stretch the outage): the
      // batch's progress and completion cannot be recorded until the server is back.
      expect(await tcpConnects(port)).toBe(false);
      server = await startDevServer({ dbFile, port, headless: true });
      const restartedAt = Date.now();
      expect(server.address).toBe(address);
      expect(server.pid).not.toBe(firstPid);
      // At least 6 proofs (12 s) of the batch were left at the stop, and the SDK retries an activity's
      // completion for 10 s: an outage under 20 s cannot swallow the batch's result, which this test's
      // claims (the result recorded by the new server) rely on. Longer outages: temporal-outage.test.ts.
      expect(restartedAt - stoppedAt, 'server outage (ms)').toBeLessThan(20_000);

      // Healthy host, outage shorter than every timeout: the restart must not change the verdict.
      await expectPromoted(fleet.client, id, 90_000);
      const handle = fleet.client.workflow.getHandle(id);
      // The same run, carried over in the SQLite file; the batch's result was recorded by the new server.
      expect((await handle.describe()).runId).toBe(runId);
      expect((await activityCompletedAt(fleet.client, id, 'runBenchmark'))?.getTime()).toBeGreaterThan(restartedAt);
      // The host's worker polled the restarted server for new work: the prover start ran on it.
      const prodStarted = await pollUntil(
        'startProduction to complete on the host',
        async () => (await activityCompletedAt(fleet.client, id, 'startProduction')) ?? undefined,
        { timeoutMs: 30_000, intervalMs: 250 },
      );
      expect(prodStarted.getTime()).toBeGreaterThan(restartedAt);
      // Nobody restarted the workers: the same control worker and the same GPU-host process carried on.
      expect(fleet.worker.getState()).toBe('RUNNING');
      expect(processAlive(hostWorker.pid)).toBe(true);
      await expectOneRentEachAndNoneUnowned(fleet.client, fleet.sim, [id]);

      await cancelAndWait(fleet.client, id);
      expectCleanedUp(fleet, offer.id);
      await pollUntil(
        `processes of instance ${inst.id} gone`,
        () => (hostProcesses(inst.id).length === 0 ? true : undefined),
        {
          timeoutMs: 10_000,
        },
      );
    },
  );
});
