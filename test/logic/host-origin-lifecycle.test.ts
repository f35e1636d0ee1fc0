import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailureType } from '../../workflows/domain/failures.js';
import { inputsOf, type LogicEnv, report, startLogicEnv } from './harness.js';

/**
 * A host whose benchmark goes badly cannot end its rental its own way (issue 43, H5): the lifecycle, with
 * every activity a stub on the real dev server, reads the host's step failure itself.
 */
let env: LogicEnv;
beforeAll(async () => {
  env = await startLogicEnv();
});
afterAll(async () => env?.close());

describe.concurrent('a host step that fails its own way', () => {
  it('a heartbeat over the server’s size limit ends HostPayloadTooLarge: killed, counted against the machine', async () => {
    const run = await env.start({
      host: {
        async runBenchmark() {
          // 2.5 MB: the server (limit.blobSize.error, 2 MB) fails the step itself, a ServerFailure.
          Context.current().heartbeat('x'.repeat(2_500_000));
          await Context.current().sleep(60_000);
          return report(12, 600_000);
        },
      },
    });
    const f = await run.failure();
    expect(f.type).toBe(FailureType.HostPayloadTooLarge);
    expect(f.details?.[0]).toMatchObject({ verdict: 'kill' });
    expect(inputsOf(run, 'recordOutcome')[0]).toMatchObject({
      outcome: 'killed',
      failureType: FailureType.HostPayloadTooLarge,
    });
    expect(run.count('destroyInstance')).toBe(1);
  });

  it('a benchmark ended as VastApiError by the host is HostMisreported, not ours', async () => {
    const run = await env.start({
      host: {
        runBenchmark: () =>
          Promise.reject(
            ApplicationFailure.create({ type: FailureType.VastApiError, message: 'vast is down', nonRetryable: true }),
          ),
      },
    });
    const f = await run.failure();
    expect(f.type).toBe(FailureType.HostMisreported);
    expect(f.details?.[0]).toMatchObject({ verdict: 'kill', claimedType: FailureType.VastApiError });
    expect(inputsOf(run, 'recordOutcome')[0]).toMatchObject({ failureType: FailureType.HostMisreported });
  });

  it('our own outage stays ours: a Vast call failing VastApiError is not the host’s', async () => {
    const run = await env.start({
      awaitRunning: () =>
        Promise.reject(
          ApplicationFailure.create({ type: FailureType.VastApiError, message: '503', nonRetryable: true }),
        ),
    });
    const f = await run.failure();
    expect(f.type).toBe(FailureType.VastApiError);
    expect(f.details?.[0]).toMatchObject({ verdict: 'inconclusive' });
  });
});
