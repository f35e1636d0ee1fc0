import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { classify, fromCall } from '../../workflows/classify.js';
import { FailureType } from '../../workflows/domain/failures.js';
import { judge } from '../../workflows/lifecycle/verdict.js';
import { withDefaults } from '../../workflows/domain/policy/defaults.js';
import type { EarlyStopEvidence } from '../../workflows/domain/types.js';
import { report } from './harness.js';

/** The verdict and the failure's origin, decided without a server: plain functions of what the calls returned. */

const input = withDefaults({ offerId: 7, minRate: 29 });
const override = { operator: 'ops', reason: 'known good machine' };
const evidence = (over: Partial<EarlyStopEvidence>): EarlyStopEvidence => ({
  bound: 'gpu-ceiling',
  bestRate: 20,
  gpuCeilingRate: 20,
  gpus: 2,
  completed: 4,
  requested: 12,
  ...over,
});
const killed = (v: ReturnType<typeof judge>) => {
  if (!('kill' in v)) throw new Error(`expected a kill, got ${JSON.stringify(v)}`);
  return v.kill;
};

describe.concurrent('the verdict on a benchmark', () => {
  it('promotes a batch at or above minRate, with its rate as the reason', () => {
    expect(judge(report(12, 600_000), 72, input, null)).toEqual({ promote: '72 proofs/h', restartDaemonFirst: false });
  });

  it('kills a batch under minRate, with the rate and the timings as evidence', () => {
    const k = killed(judge(report(12, 3_600_000), 12, input, null));
    expect(k.type).toBe(FailureType.BenchRateBelowMin);
    expect(k.message).toBe('12 proofs/h is below the minimum of 29');
    expect(k.details?.[0]).toMatchObject({ rate: 12, minRate: 29, elapsedMs: 3_600_000 });
  });

  it('kills a batch the timer cut short as BenchmarkTimeout, even with an operator override', () => {
    const k = killed(judge(report(2, 2_700_000, { deadlineReached: true }), 2.67, input, override));
    expect(k.type).toBe(FailureType.BenchmarkTimeout);
    expect(k.message).toBe('benchmark did not finish within 45 min (2/12 proofs)');
    expect(k.details?.[0]).toMatchObject({ completed: 2, requested: 12, expectedMs: 1_489_655 });
  });

  it("phrases the host's early stop from its evidence: the GPUs' ceiling or the best pace", () => {
    const ceiling = killed(judge(report(4, 900_000, { gaveUp: evidence({}) }), 16, input, null));
    expect(ceiling.type).toBe(FailureType.BenchRateBelowMin);
    // One sentence, each bound once (it read "…cannot exceed 20 proofs/h cannot reach 29 proofs/h").
    expect(ceiling.message).toBe(
      'stopped early after 4 of 12 proofs: 2 GPUs cannot exceed 20 proofs/h, under the minimum of 29 proofs/h',
    );
    expect(ceiling.details?.[0]).toMatchObject({ earlyStop: true, gpuCeilingRate: 20 });
    const pace = killed(
      judge(
        report(4, 900_000, { gaveUp: evidence({ bound: 'best-pace', bestRate: 25, gpuCeilingRate: 80 }) }),
        16,
        input,
        null,
      ),
    );
    expect(pace.message).toBe(
      'stopped early after 4 of 12 proofs: even at the fastest pace seen the batch cannot exceed 25 proofs/h, under the minimum of 29 proofs/h',
    );
  });

  it('promotes on an override, restarting the daemon first when the host had given up (and so stopped it)', () => {
    expect(judge(report(4, 900_000, { gaveUp: evidence({}) }), 16, input, override)).toEqual({
      promote: 'operator override by ops: known good machine',
      restartDaemonFirst: true,
    });
    expect(judge(report(12, 3_600_000), 12, input, override)).toMatchObject({ restartDaemonFirst: false });
  });
});

describe.concurrent("a failure's origin comes from the call that failed", () => {
  const timeout = (type: 'SCHEDULE_TO_START' | 'HEARTBEAT' | 'START_TO_CLOSE') =>
    new ActivityFailure(
      'activity failed',
      'step',
      '1',
      RetryState.TIMEOUT,
      'worker',
      new TimeoutFailure('timed out', null, type),
    );
  const thrownBy = async (origin: Parameters<typeof fromCall>[0], err: unknown) =>
    fromCall(origin, () => Promise.reject(err)).catch((e: unknown) => e);

  it('tells a host that never connected (its first step never started) from one lost between steps', async () => {
    expect(classify(await thrownBy('host-first', timeout('SCHEDULE_TO_START'))).type).toBe(
      FailureType.HostNeverConnected,
    );
    expect(classify(await thrownBy('host', timeout('SCHEDULE_TO_START'))).type).toBe(FailureType.HostLost);
    const silent = classify(await thrownBy('host', timeout('HEARTBEAT')));
    expect(silent).toMatchObject({
      type: FailureType.HostLost,
      message: 'the GPU-host worker went silent (HEARTBEAT timeout)',
    });
  });

  it('blames a Vast call that timed out on Vast, never on the host', async () => {
    expect(classify(await thrownBy('vast', timeout('START_TO_CLOSE'))).type).toBe(FailureType.VastApiError);
  });

  it('keeps the nearest call: an outer wrapper does not re-tag', async () => {
    const err = await thrownBy('host-first', timeout('SCHEDULE_TO_START'));
    expect(classify(await thrownBy('vast', err)).type).toBe(FailureType.HostNeverConnected);
  });

  it('a typed failure is its own classification wherever it came from; an untagged error is Internal', async () => {
    const typed = ApplicationFailure.create({ type: FailureType.DaemonOOM, message: 'oom', nonRetryable: true });
    expect(classify(await thrownBy('host', typed)).type).toBe(FailureType.DaemonOOM);
    expect(classify(new Error('a bug'))).toMatchObject({ type: FailureType.Internal, message: 'workflow: a bug' });
  });
});
