import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailureType } from '../../workflows/domain/failures.js';
import type { EarlyPromoteEvidence } from '../../workflows/domain/policy/early-promote.js';
import {
  hostFailure,
  type LogicEnv,
  report,
  type Run,
  startLogicEnv,
  inputsOf,
  cancelAfterPromotion,
  STUB_CLOCK,
} from './harness.js';
import { clockRate } from '../../workflows/domain/policy/clock.js';

let env: LogicEnv;
beforeAll(async () => {
  env = await startLogicEnv();
});
afterAll(async () => env?.close());

const promotedThenCancelled = (run: Run) => cancelAfterPromotion(env, run);

const evidence: EarlyPromoteEvidence = {
  confidence: 0.95,
  completed: 4,
  requested: 12,
  elapsedMs: 240_000,
  proofBoundMs: 150_000,
  rateLowerBound: 32.7,
  projectedRate: 70,
  minRate: 29,
};

describe.concurrent('verdicts in the lifecycle, with every activity a stub', () => {
  it('asks the batch for an early promote and promotes on its evidence, with the bound in the record', async () => {
    const run = await env.start({
      host: { runBenchmark: async () => report(4, 240_000, { promotedEarly: evidence }) },
    });
    await promotedThenCancelled(run);
    // The stub offer has 2 GPUs and 251 GB: 2-way, so the floor of 3 proofs (earlyStopAfterProofs) rules.
    // The bar on the host's clock (the stub clock, 1000x): the host judges what it measures there.
    expect(inputsOf(run, 'runBenchmark')[0]).toMatchObject({
      earlyPromote: { minRate: clockRate(29, STUB_CLOCK), confidence: 0.95, minProofs: 3 },
    });
    expect(inputsOf(run, 'recordOutcome')[0]).toMatchObject({ outcome: 'promoted' });
    expect(String(inputsOf(run, 'recordOutcome')[0]?.reason)).toMatch(
      /^promoted early after 4\/12 proofs: projected 70 proofs\/h; even at 150 s per remaining proof \(95 % bound\) the batch makes 32.7 proofs\/h >= 29$/,
    );
    const promotedEvent = inputsOf(run, 'recordEvent').find((e) => e.stage === 'promoted');
    // The host's rate is the projection, not the partial batch's own (4 in 4 min = 60/h).
    expect(promotedEvent?.details).toMatchObject({ rate: 70, earlyPromote: evidence });
  });

  it('runs the whole batch for a machine on probation, and for a request with early promote off', async () => {
    const probation = await env.start({ standing: 'probation' });
    const off = await env.start({}, { verdicts: { earlyPromote: false } });
    await promotedThenCancelled(probation);
    await promotedThenCancelled(off);
    expect(inputsOf(probation, 'runBenchmark')[0]).not.toHaveProperty('earlyPromote');
    expect(inputsOf(off, 'runBenchmark')[0]).not.toHaveProperty('earlyPromote');
    const bench = inputsOf(probation, 'recordEvent').find((e) => e.stage === 'benchmark');
    expect(bench?.details).toMatchObject({ probation: true });
    expect(inputsOf(probation, 'machineStanding')[0]).toEqual({ machineId: 4242 });
  });

  it('names the verdict of a failure: kill for the host’s fault, inconclusive for a transient', async () => {
    const crash = await env.start({
      host: { runBenchmark: () => Promise.reject(hostFailure(FailureType.DaemonCrashed)) },
    });
    const drop = await env.start(
      { host: { runBenchmark: () => Promise.reject(hostFailure(FailureType.DaemonTransportError)) } },
      { verdicts: { transientMarkSec: 600 } },
    );
    expect((await crash.failure()).details?.[0]).toMatchObject({ verdict: 'kill' });
    expect((await drop.failure()).details?.[0]).toMatchObject({ verdict: 'inconclusive' });
    expect(inputsOf(drop, 'recordOutcome')[0]).toMatchObject({
      failureType: FailureType.DaemonTransportError,
      transientMarkSec: 600,
    });
    const killed = inputsOf(drop, 'recordEvent').find((e) => e.stage === 'killed');
    expect(killed?.details).toMatchObject({ verdict: 'inconclusive', destroyed: true });
  });
});
