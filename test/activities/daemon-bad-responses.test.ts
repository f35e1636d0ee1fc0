import { appendFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostScenarioSchema } from '../../infra/sim/scenario.js';
import { type SimDaemon, startSimDaemon } from '../../infra/sim/cuzk/server.js';
import { freePort } from '../../infra/temporal/dev-server.js';
import { waitUntil } from '../../infra/dev/poll.js';
import { FailureType } from '../../workflows/domain/failures.js';
import { C1_INPUT, hostActivitiesOver, hostActivityEnv as env } from '../helpers/host-activities.js';

/**
 * A daemon that answers, but not within the contract (the simulator's `badResponses` fault, served
 * in-process over the real proto): the host's proof step names what is wrong, as the type the
 * lifecycle kills with, and the host keeps answering afterwards so its diagnostics can be collected.
 */

let dir = '';
const daemons: SimDaemon[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'bad-daemon-'));
  await writeFile(path.join(dir, 'c1.json'), C1_INPUT);
});
afterAll(async () => {
  for (const d of daemons) d.close();
  await rm(dir, { recursive: true, force: true });
});

/** A simulated daemon with `badResponses`, ready on a port of its own, and host activities over it. */
async function hostOver(badResponses: 'garbage' | 'oversized') {
  const listen = `127.0.0.1:${await freePort()}`;
  const workDir = await mkdtemp(path.join(dir, `${badResponses}-`));
  const { acts, supervisor } = hostActivitiesOver(listen, dir, workDir);
  const scenario = HostScenarioSchema.parse({ startupSec: 0, proofSec: 1, faults: { badResponses } });
  daemons.push(
    startSimDaemon({
      cfg: { listen, paramCache: dir, partitionWorkers: 2 },
      scenario,
      scale: 0.001,
      gpuName: 'RTX 4090',
      numGpus: 1,
      // Where the supervisor keeps the daemon's output, as if it had started this daemon.
      log: (line) => appendFileSync(supervisor.logFile, `${line}\n`),
      die: () => {
        throw new Error('the simulated daemon died');
      },
    }),
  );
  // The daemon is up once it answers GetStatus (the proxy in front listens after its startup).
  await waitUntil(
    'the simulated daemon',
    () =>
      env()
        .run(() => acts.sampleDaemon())
        .then(
          () => true,
          () => false,
        ),
    {
      timeoutMs: 10_000,
      intervalMs: 50,
    },
  );
  return { acts, env };
}

async function failureOf(p: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await p.then(
    () => new Error('expected the proof step to fail'),
    (e: unknown) => e,
  );
  if (!(err instanceof ApplicationFailure)) throw err;
  return err;
}

describe('a daemon returning garbage or oversized messages', () => {
  it('garbage: ProofFailed naming every bad field; the host still answers', async () => {
    const { acts, env } = await hostOver('garbage');
    const f = await failureOf(env().run(() => acts.warmupProof({ step: 'warmup', proofDeadlineSec: 30 })));
    expect(f.type).toBe(FailureType.ProofFailed);
    expect(f.message).toContain('malformed response');
    expect(f.message).toContain('result.job_id');
    expect(f.message).toContain('result.proof: empty');
    expect(f.message).toContain('result.total_ms');
    // The daemon's log is the evidence the kill carries.
    const details = f.details?.[0] as { diagnostics?: { daemonLogTail?: string } } | undefined;
    expect(details?.diagnostics?.daemonLogTail).toContain('corrupted result');
    // Survived the bad answer: the next call is served.
    expect(await env().run(() => acts.sampleDaemon())).toMatchObject({ completed: 1 });
  });

  it('oversized: refused at the 128 MiB limit as a transport error, not buffered; the host still answers', async () => {
    const { acts, env } = await hostOver('oversized');
    const f = await failureOf(env().run(() => acts.warmupProof({ step: 'warmup', proofDeadlineSec: 30 })));
    expect(f.type).toBe(FailureType.DaemonTransportError);
    expect(f.message).toContain('RESOURCE_EXHAUSTED');
    const details = f.details?.[0] as { diagnostics?: { grpcMessage?: string; daemonLogTail?: string } } | undefined;
    expect(details?.diagnostics?.grpcMessage).toMatch(/larger than max/i);
    expect(details?.diagnostics?.daemonLogTail).toContain('starting, partition_workers=2');
    expect(await env().run(() => acts.sampleDaemon())).toMatchObject({ completed: 1 });
  });
});
