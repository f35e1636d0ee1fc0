import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceLifecycle } from '../../workflows/index.js';
import { expectCleanedUp, expectKilled } from '../helpers/expect-kill.js';
import { faultSeed, seededInt, waitForBenchmarkRunning } from '../helpers/fault-probes.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { hostProcesses, hostWorkerAndDaemon, processAlive } from '../helpers/host-processes.js';
import { simOffer } from '../helpers/offers.js';
import { pollUntil } from '../../infra/dev/poll.js';

// Warmups at the usual pace (4 s proofs at SIM_TIME_SCALE=0.01), then the restarted daemon slows down
// (after 400 simulated seconds of uptime, i.e. from the timed batch on) to 20 s proofs, 2 at a time: after
// the kill no proof finishes before HostLost and the destroy, so the orphaned daemon is still alive when
// the instance is destroyed. It would otherwise die writing its next log line into the dead worker's
// pipe, and the test would prove nothing about the destroy.
const PROOFS = 4;
const offer = simOffer({ host: { proofSec: 400, faults: { degradeAfterSec: 400, degradeFactor: 5 } } });
const seed = faultSeed();
// Kill at the start of the first or the second round of the batch.
const killAfterProofs = 2 * seededInt(seed, 'gpu-host-kill', 0, 1);

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv([offer]);
});
afterAll(async () => env?.close());

describe(`kill -9 of the GPU-host worker (seed ${seed})`, () => {
  it(
    `mid-benchmark (after ${killAfterProofs} proofs): HostLost, the instance destroyed with its orphaned daemon, no second rent`,
    { timeout: 150_000 },
    async () => {
      const id = `t-fault-host-${offer.id}`;
      // A heartbeat timeout of 6 s: short enough to notice the dead worker well before the orphan's next
      // proof ends, long enough that a loaded 2-core machine does not lose a live host.
      await env.client.workflow.start(instanceLifecycle, {
        taskQueue: env.taskQueue,
        workflowId: id,
        args: [
          fastRequest(offer.id, {
            benchmarkProofs: PROOFS,
            timeouts: { heartbeatSec: 6, benchmarkSec: 100, proofDeadlineSec: 60 },
          }),
        ],
        workflowExecutionTimeout: '4 minutes',
      });
      await waitForBenchmarkRunning(env.client, id, 90_000, killAfterProofs);

      const inst = env.sim.ledger().find((r) => r.offerId === offer.id);
      if (!inst) throw new Error('no instance rented');
      const { worker, daemon } = hostWorkerAndDaemon(inst.id);
      if (!worker || !daemon) throw new Error(`host processes not found: ${JSON.stringify(hostProcesses(inst.id))}`);
      // The daemon is the worker's child, in the host's process group as in the container.
      expect(daemon.pgid).toBe(worker.pgid);

      // Only the worker, not its group: the daemon is orphaned, as when the worker crashes for real.
      process.kill(worker.pid, 'SIGKILL');
      await pollUntil('the GPU-host worker to die', () => (processAlive(worker.pid) ? undefined : true), {
        timeoutMs: 5_000,
        intervalMs: 20,
      });
      expect(processAlive(daemon.pid), 'orphaned daemon alive after the worker died').toBe(true);
      let daemonGoneAt: number | null = null;
      const watch = setInterval(() => {
        if (daemonGoneAt === null && !processAlive(daemon.pid)) daemonGoneAt = Date.now();
      }, 25);

      try {
        const k = await expectKilled(env, id, 'already-started', 'HostLost');
        expect(k.details.stage).toBe('benchmark');
        expect(k.details.timeoutType).toBe('HEARTBEAT');
        // One rent, destroyed, and the simulator's host (its process group) gone.
        expectCleanedUp(env, offer.id);
        const destroyedAt = env.sim.ledger().find((r) => r.id === inst.id)?.destroyedAt ?? 0;
        // Read from /proc, not from the simulator: the orphaned daemon (and all else the host ran) is gone.
        await pollUntil(
          `processes of instance ${inst.id} gone`,
          () => (hostProcesses(inst.id).length === 0 && !processAlive(daemon.pid) ? true : undefined),
          { timeoutMs: 3_000, intervalMs: 25 },
        );
        // The orphan lived until the destroy, so it was the destroy that ended it.
        expect(daemonGoneAt ?? Date.now()).toBeGreaterThanOrEqual(destroyedAt);
      } finally {
        clearInterval(watch);
      }
    },
  );
});
