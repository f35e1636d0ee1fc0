import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lifecycleStatusQuery } from '../../workflows/definitions.js';
import { hostTaskQueue, instanceLabel, rentalKey } from '../../workflows/domain/task-queues.js';
import { type LogicEnv, type Run, startLogicEnv, until } from './harness.js';

let env: LogicEnv;
beforeAll(async () => {
  env = await startLogicEnv();
});
afterAll(async () => env?.close());

const STORE = ['recordInstance', 'recordEvent', 'recordBenchmark', 'recordOutcome', 'saveLogTail'];
/** The rental key of every store write the lifecycle made, with the workflow id beside it. */
const storeKeys = (run: Run) =>
  run.calls
    .filter((c) => STORE.includes(c.name))
    .map((c) => {
      const input = c.input as { rentalKey?: string; workflowId?: string };
      return `${input.rentalKey} ${input.workflowId}`;
    });

describe.concurrent('a lifecycle knows its rental', () => {
  it('keys its label, host queue and every store write by its rental, also after continue-as-new', async () => {
    const run = await env.start({}, { watch: { intervalSec: 0.2, samplesPerRun: 2 } });
    const key = rentalKey(run.workflowId, run.firstRunId);
    const handle = env.client.workflow.getHandle(run.workflowId);
    await until('a second run', async () => (await handle.describe()).runId !== run.firstRunId);
    expect((await handle.query(lifecycleStatusQuery)).rentalKey).toBe(key);
    await handle.cancel();
    await run.result().catch(() => undefined);

    const rent = run.calls.find((c) => c.name === 'rentOffer')?.input;
    expect(rent).toMatchObject({ label: instanceLabel(key), hostTaskQueue: hostTaskQueue(instanceLabel(key)) });
    const keys = storeKeys(run);
    expect(keys.length).toBeGreaterThan(10);
    expect(new Set(keys)).toEqual(new Set([`${key} ${run.workflowId}`]));
    // The kill after continue-as-new is the same rental's, numbered on from where the first run stopped.
    const last = run.calls.filter((c) => c.name === 'recordEvent').at(-1)?.input as { stage: string; seq: number };
    expect(last.stage).toBe('killed');
    const seqs = run.calls.filter((c) => c.name === 'recordEvent').map((c) => (c.input as { seq: number }).seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });
});
