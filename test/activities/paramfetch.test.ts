import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runParamfetch } from '../../activities/gpu-host/paramfetch.js';
import type { StepContext } from '../../activities/gpu-host/step-keeper.js';

/** A step context that records heartbeats; `abort` is the workflow's cancel. */
function stepContext() {
  const abort = new AbortController();
  const beats: unknown[] = [];
  const ctx: StepContext = { heartbeat: (d) => beats.push(d), cancellationSignal: abort.signal, info: {} };
  return { ctx, beats, abort };
}

async function failureOf(p: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof ApplicationFailure)) throw new Error(`expected an ApplicationFailure, got ${String(err)}`);
  return err;
}

describe('paramfetch on this machine (sh)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'paramfetch-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('logs the output, heartbeats with its last line and counts its bytes', async () => {
    const log = path.join(dir, 'ok.log');
    const { ctx, beats } = stepContext();
    const res = await runParamfetch(['sh', '-c', 'echo fetching; echo done >&2'], log, 5_000, undefined, ctx);
    expect(res.outputBytes).toBe('fetching\ndone\n'.length);
    expect(await readFile(log, 'utf8')).toMatch(/fetching\n[\s\S]*done\n|done\n[\s\S]*fetching\n/);
    expect(beats[0]).toEqual({ outputBytes: 0, lastLine: '', elapsedMs: 0 });
    expect(beats).toContainEqual(expect.objectContaining({ lastLine: expect.stringMatching(/fetching|done/) }));
  });

  it('a non-zero exit is ParamfetchFailed with its code and the output as evidence', async () => {
    const { ctx } = stepContext();
    const run = runParamfetch(
      ['sh', '-c', 'echo no route to host; exit 3'],
      path.join(dir, 'exit.log'),
      5_000,
      undefined,
      ctx,
    );
    const f = await failureOf(run);
    expect(f.type).toBe('ParamfetchFailed');
    expect(f.message).toBe('paramfetch exited with code 3');
    expect(f.details?.[0]).toMatchObject({ stalled: false, diagnostics: { exitCode: 3, signal: null } });
    expect(f.details?.[0]).toMatchObject({ diagnostics: { outputTail: expect.stringContaining('no route to host') } });
  });

  it('no output for the stall time kills it: ParamfetchFailed, stalled', async () => {
    const { ctx } = stepContext();
    const started = Date.now();
    const run = runParamfetch(
      ['sh', '-c', 'echo started; exec sleep 30'],
      path.join(dir, 'stall.log'),
      400,
      undefined,
      ctx,
    );
    const f = await failureOf(run);
    expect(f.type).toBe('ParamfetchFailed');
    expect(f.message).toBe('paramfetch stalled: no progress for 0 s');
    expect(f.details?.[0]).toMatchObject({ stalled: true, diagnostics: { exitCode: null, signal: 'SIGKILL' } });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("the workflow's cancel kills it and ends the step with the cancel's reason", async () => {
    const { ctx, abort } = stepContext();
    const run = runParamfetch(['sh', '-c', 'exec sleep 30'], path.join(dir, 'cancel.log'), 10_000, undefined, ctx);
    setTimeout(() => abort.abort(new Error('benchmark timer fired')), 200);
    await expect(run).rejects.toThrow('benchmark timer fired');
  });
});
