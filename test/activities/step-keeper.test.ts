import { ActivityCancellationDetails } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { StepKeeper } from '../../activities/gpu-host/step-keeper.js';

/** A step whose work the test finishes by hand, counting how often it was started. */
function manualStep() {
  let finish: (v: string) => void = () => undefined;
  let starts = 0;
  let aborted: unknown = null;
  const work = (ctx: { cancellationSignal: AbortSignal; heartbeat(d?: unknown): void }) => {
    starts++;
    ctx.heartbeat({ started: true });
    ctx.cancellationSignal.addEventListener('abort', () => {
      aborted = ctx.cancellationSignal.reason;
      finish('partial');
    });
    return new Promise<string>((resolve) => {
      finish = resolve;
    });
  };
  return { work, finish: (v: string) => finish(v), starts: () => starts, aborted: () => aborted };
}

describe('StepKeeper: a host step survives the attempt the server lost', () => {
  it('an attempt lost by the server detaches; the next attempt with the same id re-attaches, work runs once', async () => {
    const keeper = new StepKeeper();
    const step = manualStep();
    const lost = new MockActivityEnvironment();
    const first = lost.run(() => keeper.run('run/1/benchmark', step.work));
    // The server timed the attempt out (heartbeats could not reach it): NOT_FOUND / TIMED_OUT.
    lost.cancel('TIMED_OUT', new ActivityCancellationDetails({ timedOut: true }));
    await expect(first).rejects.toThrow();
    expect(step.aborted()).toBeNull();

    const again = new MockActivityEnvironment();
    const beats: unknown[] = [];
    again.on('heartbeat', (d: unknown) => beats.push(d));
    const second = again.run(() => keeper.run('run/1/benchmark', step.work));
    step.finish('report');
    expect(await second).toBe('report');
    expect(step.starts()).toBe(1);
    expect(beats[0]).toEqual({ started: true });
  });

  it('a finished step hands back its kept result until a new step id acknowledges it', async () => {
    const keeper = new StepKeeper();
    let runs = 0;
    const work = async () => `result ${++runs}`;
    expect(await new MockActivityEnvironment().run(() => keeper.run('r/1/warmup', work))).toBe('result 1');
    // The completion was swallowed by an outage: the workflow asks again and gets the same result.
    expect(await new MockActivityEnvironment().run(() => keeper.run('r/1/warmup', work))).toBe('result 1');
    expect(keeper.size).toBe(1);
    expect(await new MockActivityEnvironment().run(() => keeper.run('r/2/benchmark', work))).toBe('result 2');
    expect(keeper.size).toBe(1);
  });

  it('a kept failure is handed back too, not run again', async () => {
    const keeper = new StepKeeper();
    let runs = 0;
    const work = async () => {
      runs++;
      throw new Error('daemon crashed');
    };
    for (let i = 0; i < 2; i++) {
      await expect(new MockActivityEnvironment().run(() => keeper.run('r/3/startDaemon', work))).rejects.toThrow(
        'daemon crashed',
      );
    }
    expect(runs).toBe(1);
  });

  it('a cancel the workflow requested stops the work and returns what it hands back', async () => {
    const keeper = new StepKeeper();
    const step = manualStep();
    const env = new MockActivityEnvironment();
    const run = env.run(() => keeper.run('r/4/benchmark', step.work));
    env.cancel('CANCELLED', new ActivityCancellationDetails({ cancelRequested: true }));
    expect(await run).toBe('partial');
    expect(step.aborted()).not.toBeNull();
  });

  it('without a step id (histories from before step ids) the step runs as a plain activity', async () => {
    const keeper = new StepKeeper();
    let runs = 0;
    const work = async () => ++runs;
    await new MockActivityEnvironment().run(() => keeper.run(undefined, work));
    await new MockActivityEnvironment().run(() => keeper.run(undefined, work));
    expect(runs).toBe(2);
    expect(keeper.size).toBe(0);
  });
});
