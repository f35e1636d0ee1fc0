import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCleanedUp, expectKilled } from '../helpers/expect-kill.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { simOffer } from '../helpers/offers.js';

/** Test-side patience for a loaded machine: the verdict is what is judged here, not the pace of setup. */
const patient = {
  waitRunningSec: 60,
  hostConnectSec: 90,
  paramfetchSec: 120,
  paramfetchStallSec: 30,
  daemonReadySec: 60,
  proofDeadlineSec: 60,
  benchmarkSec: 120,
};

// A lenient bar (29 real proofs/h): the forgers would be promoted if nothing checked their claims.
const MIN_RATE = 29;

/** A daemon that answers proofs without proving: 1 % of the time a real one takes. */
const fast = simOffer({
  gpu_name: 'RTX 3060',
  num_gpus: 1,
  host: { proofSec: 100, faults: { forgedTimings: 'fast' } },
});
/** A daemon that answers every proof after exactly 100 s, with identical timings. */
const uniform = simOffer({
  gpu_name: 'RTX 4090',
  num_gpus: 2,
  host: { proofSec: 100, faults: { forgedTimings: 'uniform' } },
});

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv([fast, uniform]);
});
afterAll(async () => env?.close());

describe('claims checked: a host reporting what its GPUs cannot do is killed, not promoted', () => {
  it('kills a host whose benchmark rate is above what its GPU model and count can do', async () => {
    const k = await expectKilled(
      env,
      `forged-fast-${fast.id}`,
      fastRequest(fast.id, { minRate: MIN_RATE, benchmarkProofs: 6, timeouts: patient }),
      'ImplausibleResult',
    );
    expect(k.failure.message).toMatch(
      /^ImplausibleResult during evaluating: benchmark: claimed [\d.]+ proofs\/h, above the 144 proofs\/h that 1x RTX 3060 can do \(at least 25 s per proof per GPU\) · cost \$[\d.]+ /,
    );
    expect(k.details).toMatchObject({
      stage: 'evaluating',
      check: 'rate-above-ceiling',
      gpuName: 'RTX 3060',
      gpus: 1,
      // Real proofs/h: the lifecycle converts the simulators' clock before it judges the claim.
      ceilingRate: 144,
    });
    expect(k.details.rate as number).toBeGreaterThan(144);
    expect(k.details.timings).toHaveLength(6);
    expectCleanedUp(env, fast.id);
  });

  it('kills a host whose proof timings are identical to the millisecond', async () => {
    const k = await expectKilled(
      env,
      `forged-uniform-${uniform.id}`,
      fastRequest(uniform.id, { minRate: MIN_RATE, benchmarkProofs: 4, timeouts: patient }),
      'ImplausibleResult',
    );
    // The host's 1 s proofs on the simulators' 100x clock: 100 real seconds each.
    expect(k.failure.message).toMatch(
      /^ImplausibleResult during evaluating: benchmark: 4 proofs took the same time to within 0 % \(median 100000 ms\)/,
    );
    expect(k.details).toMatchObject({ check: 'uniform-timings', proofs: 4, relativeSpread: 0, medianMs: 100_000 });
    expectCleanedUp(env, uniform.id);
  });
});
