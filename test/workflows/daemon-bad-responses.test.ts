import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCleanedUp, expectKilled } from '../helpers/expect-kill.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { simOffer } from '../helpers/offers.js';

// A daemon that answers, but not within the contract: the host worker must name what is wrong,
// stay up to hand over its diagnostics, and the instance must still be destroyed.
const o = {
  garbage: simOffer({ host: { faults: { badResponses: 'garbage' } } }),
  oversized: simOffer({ host: { faults: { badResponses: 'oversized' } } }),
};

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv(Object.values(o));
});
afterAll(async () => env?.close());

type Diag = { daemonLogTail: string; grpcMessage?: string; grpcCode?: number };

describe('a daemon returning garbage or oversized messages', () => {
  it('garbage: ProofFailed naming every bad field, with the daemon log as evidence', async () => {
    const k = await expectKilled(env, `t-garbage-${o.garbage.id}`, fastRequest(o.garbage.id), 'ProofFailed');
    expect(k.failure.message).toContain('malformed response');
    expect(k.failure.message).toContain('result.job_id');
    expect(k.failure.message).toContain('result.proof: empty');
    expect(k.failure.message).toContain('result.total_ms');
    // Collected from the host after the bad answer: the worker survived it.
    expect((k.details.diagnostics as Diag).daemonLogTail).toContain('corrupted result');
    expectCleanedUp(env, o.garbage.id);
  });

  it('oversized: refused at the 128 MiB limit as a transport error, not buffered, worker still answering', async () => {
    const k = await expectKilled(
      env,
      `t-oversized-${o.oversized.id}`,
      fastRequest(o.oversized.id),
      'DaemonTransportError',
    );
    const diag = k.details.diagnostics as Diag;
    expect(diag.grpcMessage).toMatch(/larger than max/i);
    expect(k.failure.message).toContain('RESOURCE_EXHAUSTED');
    expect(diag.daemonLogTail).toContain('starting daemon with partition_workers');
    expectCleanedUp(env, o.oversized.id);
  });
});
