import { Context } from '@temporalio/activity';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BenchmarkInput } from '../../activities/gpu-host/activities.js';
import { FailureType } from '../../workflows/domain/failures.js';
import { countsAgainstMachine } from '../../workflows/domain/policy/bad-machine-rule.js';
import { lifecycleStatusQuery } from '../../workflows/definitions.js';
import { cancelAfterPromotion, inputsOf, type LogicEnv, report, type Run, startLogicEnv, until } from './harness.js';

/**
 * A deadline is evidence only if we were listening. Here the host's batch heartbeats stop reaching the
 * server (as in a Temporal outage: the server times the step out although the host keeps its work under
 * the step id) and the benchmark deadline (4 s, two heartbeat timeouts) passes while the workflow is
 * collecting the step: the outage covers the deadline, as the 60 s and 180 s outages did.
 */
let env: LogicEnv;
beforeAll(async () => {
  env = await startLogicEnv();
});
afterAll(async () => env?.close());

/**
 * A host whose attempts the server loses: each attempt heartbeats once (the step keeper does at once),
 * then nothing reaches the server until it times the attempt out. From attempt `keptFrom` on, the host
 * hands back the batch it kept (12 proofs in 10 minutes, 72 proofs/h); never, when undefined.
 */
function unheardHost(keptFrom?: number) {
  const attempts = new Map<string, number>();
  return async (input: BenchmarkInput) => {
    const stepId = input.stepId ?? '';
    const n = (attempts.get(stepId) ?? 0) + 1;
    attempts.set(stepId, n);
    const ctx = Context.current();
    ctx.heartbeat({ step: stepId });
    if (keptFrom !== undefined && n >= keptFrom) return report(12, 600_000);
    // Past the 2 s heartbeat timeout: the server times this attempt out; the host's work goes on.
    await ctx.sleep(6_000);
    throw new Error('attempt abandoned');
  };
}

const events = (run: Run) => inputsOf(run, 'recordEvent').map((e) => String(e.message));

describe('a benchmark deadline that passes while we cannot hear the host', () => {
  it('promotes a host whose batch finished meanwhile, on its kept proofs, collected by step id', async () => {
    const run = await env.start({ host: { runBenchmark: unheardHost(3) } });
    await cancelAfterPromotion(env, run);
    const batches = inputsOf(run, 'runBenchmark');
    // The same batch, collected by its step id: never a second batch.
    expect(new Set(batches.map((b) => b.stepId)).size).toBe(1);
    expect(batches.length).toBe(3);
    expect(events(run).some((m) => /benchmark deadline not heard: the host's batch had gone unheard/.test(m))).toBe(
      true,
    );
    const promoted = inputsOf(run, 'recordOutcome').find((o) => o.outcome === 'promoted');
    expect(promoted?.reason).toBe('72 proofs/h');
  });

  it('ends BenchmarkUnobserved when nothing can be collected: destroyed, the machine not counted', async () => {
    const run = await env.start({ host: { runBenchmark: unheardHost() } });
    const f = await run.failure();
    expect(f.type).toBe(FailureType.BenchmarkUnobserved);
    expect(f.message).toMatch(/could not hear the host/);
    expect(run.count('destroyInstance')).toBe(1);
    const killed = inputsOf(run, 'recordOutcome');
    expect(killed).toMatchObject([{ outcome: 'killed', failureType: 'BenchmarkUnobserved', destroyed: true }]);
    expect(countsAgainstMachine(String(killed[0]?.failureType))).toBe(false);
  });
});

describe('a kill under an operator’s per-deploy bar (deploy --min-rate)', () => {
  it('is recorded as judged on the operator’s bar, so the store neither counts nor marks it', async () => {
    // 12 proofs in 10 minutes is 72 proofs/h: under the operator's 2900, far over the fleet's 29.
    const run = await env.start({}, { minRate: 2900, earlyStopAfterProofs: 0, verdicts: { operatorBar: true } });
    expect((await run.failure()).type).toBe(FailureType.BenchRateBelowMin);
    const [killed] = inputsOf(run, 'recordOutcome');
    expect(killed).toMatchObject({ failureType: 'BenchRateBelowMin', operatorBar: true });
    expect(countsAgainstMachine('BenchRateBelowMin', { operatorBar: true })).toBe(false);
  });
});

describe('a watched host Vast answers oddly about', () => {
  it('keeps a promoted host through a show without actual_status (unreadable, not gone)', async () => {
    const run = await env.start(
      {
        // The first samples: what readInstanceState makes of an instance object with no actual_status.
        instanceState: (n) =>
          n < 2
            ? { status: null, dph: 0, unreadable: "Vast's answer for instance 900007 has no actual_status" }
            : { status: 'running', dph: 0.5 },
      },
      { watch: { intervalSec: 0.2, vastPatienceSec: 30 } },
    );
    const handle = env.client.workflow.getHandle(run.workflowId);
    await until('watched past the odd answers', () => run.count('instanceState') >= 4);
    expect((await handle.query(lifecycleStatusQuery)).stage).toBe('promoted');
    expect(run.count('destroyInstance')).toBe(0);
    await cancelAfterPromotion(env, run);
  });
});
