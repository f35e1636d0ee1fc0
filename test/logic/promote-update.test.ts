import { Context } from '@temporalio/activity';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lifecycleStatusQuery, promoteOverrideUpdate } from '../../workflows/definitions.js';
import { FailureType } from '../../workflows/domain/failures.js';
import { type LogicEnv, report, type Run, startLogicEnv, until } from './harness.js';

let env: LogicEnv;
beforeAll(async () => {
  env = await startLogicEnv();
});
afterAll(async () => env?.close());

const handle = (run: Run) => env.client.workflow.getHandle(run.workflowId);
const stage = async (run: Run) => (await handle(run).query(lifecycleStatusQuery)).stage;
const promote = (run: Run, reason = 'known good machine') =>
  handle(run).executeUpdate(promoteOverrideUpdate, { args: [{ operator: 'ops', reason }] });

/** The validator's refusal, as the CLI prints it. */
async function refusal(run: Run): Promise<string> {
  const err = await promote(run).then(
    (a) => new Error(`expected a refusal, got ${JSON.stringify(a)}`),
    (e: unknown) => e,
  );
  if (!(err instanceof WorkflowUpdateFailedError)) throw err;
  return err.cause instanceof Error ? err.cause.message : err.message;
}

/** A batch that heartbeats until released, then reports 2 proofs in 10 minutes: 12 proofs/h, under 29. */
function slowBatch(): { release: () => void; runBenchmark: () => Promise<ReturnType<typeof report>> } {
  let released = false;
  return {
    release: () => {
      released = true;
    },
    runBenchmark: async () => {
      const ctx = Context.current();
      while (!released) {
        ctx.heartbeat({ completed: 1 });
        await new Promise((r) => setTimeout(r, 100));
      }
      return report(2, 600_000);
    },
  };
}

describe.concurrent('the promote override is an Update with a validator', () => {
  it('is accepted before the verdict, and the slow host is promoted with the operator named', async () => {
    const batch = slowBatch();
    const run = await env.start({ host: { runBenchmark: batch.runBenchmark } });
    await until('the batch', () => run.count('runBenchmark') === 1, 30_000);
    const answer = await promote(run);
    expect(answer).toMatchObject({ accepted: true, stage: 'benchmark' });
    batch.release();
    await until('promotion', async () => (await stage(run)) === 'promoted', 30_000);
    // The stage shows at once; its record follows the stage's own store event.
    await until('the outcome record', () => run.count('recordOutcome') === 1, 30_000);
    const outcome = run.calls.find((c) => c.name === 'recordOutcome')?.input as Record<string, unknown>;
    expect(outcome).toMatchObject({ outcome: 'promoted' });
    expect(String(outcome.reason)).toContain('operator override by ops: known good machine');
    // After the verdict the same request is refused, naming it.
    expect(await refusal(run)).toBe('verdict already given: promoted at 12 proofs/h');
    await handle(run).cancel();
    await run.result().catch(() => undefined);
  });

  it('is refused with the verdict once the lifecycle is killed, and the kill reads in one message', async () => {
    let destroyed!: () => void;
    const destroyHeld = new Promise<void>((r) => (destroyed = r));
    const run = await env.start({
      host: { runBenchmark: async () => report(2, 600_000) },
      // The kill path waits here, so the lifecycle is still open after its verdict.
      destroy: () => destroyHeld,
    });
    await until('the destroy', () => run.count('destroyInstance') === 1, 30_000);
    expect(await refusal(run)).toBe('verdict already given: killed BenchRateBelowMin');
    destroyed();
    const f = await run.failure();
    expect(f.type).toBe(FailureType.BenchRateBelowMin);
    expect(f.message).toMatch(
      /^BenchRateBelowMin during evaluating: 12 proofs\/h is below the minimum of 29 · cost \$\d+\.\d{2,4} \(\$0\.500\/h for \d+(\.\d+)? (s|min|h)\)$/,
    );
    expect(f.message.match(/during/g)).toHaveLength(1);
    const details = f.details?.[0] as Record<string, unknown>;
    expect(Object.keys(details)[0]).toBe('summary');
    // The stub host reports its proofs a second apart.
    expect(String(details.summary)).toMatch(/2 proof\(s\) took 100 s \/ 10\d s \/ 10\d s \(min \/ median \/ max\)/);
    expect(details).toMatchObject({ rate: 12, minRate: 29 });
  });

  it('refuses an override without a reason', async () => {
    const batch = slowBatch();
    const run = await env.start({ host: { runBenchmark: batch.runBenchmark } });
    await until('the batch', () => run.count('runBenchmark') === 1, 30_000);
    const err = await promote(run, ' ').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((err as WorkflowUpdateFailedError).cause?.message).toBe('an override needs a reason');
    batch.release();
    expect((await run.failure()).type).toBe(FailureType.BenchRateBelowMin);
  });
});
