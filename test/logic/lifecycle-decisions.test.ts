import { Context, sleep } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lifecycleStatusQuery, promoteOverrideUpdate } from '../../workflows/definitions.js';
import { FailureType } from '../../workflows/domain/failures.js';
import {
  hostFailure,
  type LogicEnv,
  report,
  type Run,
  startLogicEnv,
  until,
  cancelAfterPromotion,
  STUB_CLOCK,
} from './harness.js';

let env: LogicEnv;
beforeAll(async () => {
  env = await startLogicEnv();
});
afterAll(async () => env?.close());

/** A promoted lifecycle watches for ever: cancel it, and check the cleanup destroyed it once. */
async function cancelPromoted(run: Run): Promise<void> {
  await cancelAfterPromotion(env, run);
  expect(run.count('destroyInstance')).toBe(1);
}

/** What a host reports when it gave up on a batch: its GPUs cannot reach the default 29 proofs/h. */
const GPU_CEILING_SHORT = {
  bound: 'gpu-ceiling',
  bestRate: 20,
  gpuCeilingRate: 20,
  gpus: 2,
  completed: 4,
  requested: 12,
} as const;

const outcome = (run: Run) =>
  run.calls.filter((c) => c.name === 'recordOutcome').map((c) => c.input as Record<string, unknown>);

describe.concurrent('the lifecycle decides, with every activity a stub', () => {
  it('promotes a healthy host, starts production once, and keeps watching across continue-as-new', async () => {
    const run = await env.start({}, { watch: { intervalSec: 0.2, samplesPerRun: 3 } });
    await until(
      'a second run',
      async () => (await env.client.workflow.getHandle(run.workflowId).describe()).runId !== run.firstRunId,
    );
    expect(outcome(run)[0]).toMatchObject({ outcome: 'promoted', failureType: null, destroyed: false });
    expect(run.count('startProduction')).toBe(1);
    expect(run.count('sampleDaemon')).toBeGreaterThanOrEqual(3);
    await cancelPromoted(run);
    expect(outcome(run)[1]).toMatchObject({ outcome: 'killed', failureType: FailureType.CancelledByOperator });
  });

  it.each([
    ['paramfetch', FailureType.ParamfetchFailed, 'paramfetch'],
    ['startDaemon', FailureType.DaemonOOM, 'warmup'],
    ['warmupProof', FailureType.ProofFailed, 'warmup'],
    ['runBenchmark', FailureType.DaemonCrashed, 'benchmark'],
  ] as const)(
    'a host failure in %s ends the lifecycle as %s, destroys the instance and records it',
    async (step, type, during) => {
      const run = await env.start({ host: { [step]: () => Promise.reject(hostFailure(type)) } });
      const f = await run.failure();
      expect(f.type).toBe(type);
      expect(f.message).toContain(`during ${during}`);
      expect(run.count('destroyInstance')).toBe(1);
      expect(outcome(run)).toEqual([
        expect.objectContaining({ outcome: 'killed', failureType: type, destroyed: true }),
      ]);
    },
  );

  it('answers a dropped stream in warmup with one daemon restart, and fails the second', async () => {
    let drops = 1;
    const cured = await env.start({
      host: {
        warmupProof: async () => {
          if (drops-- > 0) throw hostFailure(FailureType.DaemonTransportError);
          return { index: 0, totalMs: 1, synthesisMs: 1, gpuComputeMs: 1 };
        },
      },
    });
    await cancelPromoted(cured);
    // warmup start, the remedy's restart, the restart with full partition workers.
    expect(cured.count('startDaemon')).toBe(3);
    expect(cured.calls.some((c) => JSON.stringify(c.input ?? null).includes('restarting daemon once'))).toBe(true);

    const failed = await env.start({
      host: { warmupProof: () => Promise.reject(hostFailure(FailureType.DaemonTransportError)) },
    });
    expect((await failed.failure()).type).toBe(FailureType.DaemonTransportError);
    expect(failed.count('warmupProof')).toBe(2);
  });

  it('tells a host that never connects from one that goes silent mid-step', async () => {
    const never = await env.start({ hostConnects: false });
    const silent = await env.start({
      host: {
        warmupProof: async () => {
          Context.current().heartbeat({ step: 'warmup' });
          await new Promise((r) => setTimeout(r, 6_000));
          return { index: 0, totalMs: 1, synthesisMs: 1, gpuComputeMs: 1 };
        },
      },
    });
    const n = await never.failure();
    expect(n.type).toBe(FailureType.HostNeverConnected);
    expect(never.count('destroyInstance')).toBe(1);
    const s = await silent.failure();
    expect(s.type).toBe(FailureType.HostLost);
    expect(s.message).toMatch(/went silent \(HEARTBEAT timeout\)/);
  });

  it('runs a step once more when it was handed out but never started and the host answers a probe', async () => {
    let first = true;
    const run = await env.start({
      host: {
        warmupProof: async () => {
          // The first dispatch never starts: no heartbeat until long after the heartbeat timeout.
          if (first) {
            first = false;
            await new Promise((r) => setTimeout(r, 3_000));
          }
          return { index: 0, totalMs: 1, synthesisMs: 1, gpuComputeMs: 1 };
        },
      },
    });
    await cancelPromoted(run);
    expect(run.count('inspectHost')).toBe(2); // the PCE check and the probe
    expect(run.calls.some((c) => JSON.stringify(c.input ?? null).includes('never started'))).toBe(true);
  });

  it('declares the host lost when a step was never started and the probe gets no answer either', async () => {
    let probes = 0;
    const run = await env.start({
      host: {
        inspectHost: async () => {
          if (probes++ === 0) return { pceCached: false };
          await new Promise((r) => setTimeout(r, 4_000));
          return { pceCached: false };
        },
        warmupProof: async () => {
          await new Promise((r) => setTimeout(r, 3_000));
          return { index: 0, totalMs: 1, synthesisMs: 1, gpuComputeMs: 1 };
        },
      },
    });
    const f = await run.failure();
    expect(f.type).toBe(FailureType.HostLost);
    expect(run.count('warmupProof')).toBe(1);
  });

  it('stops the batch when the benchmark timer fires and keeps its partial report as evidence', async () => {
    const run = await env.start({
      host: {
        runBenchmark: async (input) => {
          const ctx = Context.current();
          const started = Date.now();
          while (!ctx.cancellationSignal.aborted) {
            ctx.heartbeat({ completed: 2 });
            await sleep(200).catch(() => undefined);
          }
          // What the stub measured on its clock, in real units (the harness puts it back on the clock).
          return report(2, (Date.now() - started) / STUB_CLOCK.scale, {
            requested: input.count,
            deadlineReached: true,
          });
        },
      },
    });
    const f = await run.failure();
    expect(f.type).toBe(FailureType.BenchmarkTimeout);
    expect(f.details?.[0]).toMatchObject({ completed: 2, requested: 12 });
    expect(run.count('recordBenchmark')).toBe(1);
  });

  it('kills a host under minRate, after the full batch or when the host stopped early', async () => {
    const slow = await env.start({ host: { runBenchmark: async () => report(12, 3_600_000) } });
    const early = await env.start({
      host: { runBenchmark: async () => report(4, 900_000, { gaveUp: GPU_CEILING_SHORT }) },
    });
    const s = await slow.failure();
    expect(s.type).toBe(FailureType.BenchRateBelowMin);
    expect(s.details?.[0]).toMatchObject({ rate: 12, minRate: 29 });
    const e = await early.failure();
    expect(e.type).toBe(FailureType.BenchRateBelowMin);
    expect(e.details?.[0]).toMatchObject({ earlyStop: true, minRate: 29, gpuCeilingRate: 20 });
    // Phrased from the host's evidence, not recomputed from the timings (60 s GPU time on 2 GPUs is 120/h).
    expect(e.message).toContain('stopped early after 4 of 12 proofs: 2 GPUs cannot exceed 20 proofs/h');
  });

  it('promotes on an operator override that arrives during an early-stopped batch, restarting the daemon first', async () => {
    let released = false;
    const run = await env.start({
      host: {
        runBenchmark: async () => {
          while (!released) await new Promise((r) => setTimeout(r, 50));
          return report(4, 900_000, { gaveUp: GPU_CEILING_SHORT });
        },
      },
    });
    await until('the batch', () => run.count('runBenchmark') === 1);
    await env.client.workflow
      .getHandle(run.workflowId)
      .executeUpdate(promoteOverrideUpdate, { args: [{ operator: 'ops', reason: 'known good machine' }] });
    released = true;
    await cancelPromoted(run);
    // warmup, restart with full partition workers, and again after the early stop stopped the daemon.
    expect(run.count('startDaemon')).toBe(3);
    expect(String(outcome(run)[0]?.reason)).toContain('operator override by ops');
  });

  it.each([
    // The budget: the rented price + 20 % unless the request says (0.5 $/h rented here).
    [
      'PriceAboveBudget',
      { instanceState: () => ({ status: 'running', dph: 0.9 }) },
      { dph: 0.9, maxDph: 0.6, rentedAt: 0.5 },
    ],
    ['HostLost', { instanceState: () => ({ status: 'offline', dph: 0.5 }) }, {}],
    [
      'RateDegraded',
      { host: { sampleDaemon: async () => ({ completed: 1, failed: 0, uptimeSec: 1, at: Date.now() }) } },
      // The floor: 80 % of the default minRate of 29 proofs/h, judged over two low windows.
      { floorRate: 23.2, samples: 2 },
    ],
  ] as const)('the watch kills a promoted host: %s', async (type, scenario, details) => {
    const run = await env.start(scenario, { watch: { intervalSec: 0.2, windowSamples: 2, degradedSamples: 2 } });
    const f = await run.failure();
    expect(f.type).toBe(type);
    expect(f.message).toContain('during promoted');
    expect(f.details?.[0]).toMatchObject(details);
    if (type === 'RateDegraded') expect((f.details?.[0] as { rate: number }).rate).toBeLessThan(23.2);
    expect(outcome(run).map((o) => o.outcome)).toEqual(['promoted', 'killed']);
    expect(run.count('destroyInstance')).toBe(1);
  });

  it.each([
    // 12 proofs in 50 ms: at the stubs' clock, far above what 2x RTX 4090 can do.
    ['rate-above-ceiling', report(12, 50)],
    [
      'uniform-timings',
      report(12, 600_000, {
        timings: Array.from({ length: 12 }, (_, index) => ({
          index,
          totalMs: 100_000,
          synthesisMs: 40_000,
          gpuComputeMs: 60_000,
        })),
      }),
    ],
  ] as const)('kills a host whose benchmark claim is implausible (%s), never promoting it', async (check, rep) => {
    const run = await env.start({ host: { runBenchmark: async () => rep } });
    const f = await run.failure();
    expect(f.type).toBe(FailureType.ImplausibleResult);
    expect(f.message).toMatch(/^ImplausibleResult during evaluating: benchmark: /);
    expect(f.details?.[0]).toMatchObject({ check, where: 'benchmark' });
    expect(outcome(run).map((o) => o.outcome)).toEqual(['killed']);
    expect(run.count('destroyInstance')).toBe(1);
  });

  it('the watch kills a promoted host whose production counters claim an impossible rate', async () => {
    let completed = 0;
    const run = await env.start(
      {
        host: {
          sampleDaemon: async () => ({ completed: (completed += 1000), failed: 0, uptimeSec: 1, at: Date.now() }),
        },
      },
      { watch: { intervalSec: 0.2, windowSamples: 2, degradedSamples: 2 } },
    );
    const f = await run.failure();
    expect(f.type).toBe(FailureType.ImplausibleResult);
    expect(f.message).toMatch(
      /^ImplausibleResult during promoted: production: claimed [\d.]+ proofs\/h, above the 480 proofs\/h that 2x RTX 4090 can do/,
    );
    expect(outcome(run).map((o) => o.outcome)).toEqual(['promoted', 'killed']);
    expect(run.count('destroyInstance')).toBe(1);
  });

  it.each([
    // FAST_TIMEOUTS on the stub clock (1000x): a 2 s stall is 33 real minutes, a 4 s wait 67.
    [
      'paramfetch',
      FailureType.ParamfetchFailed,
      'paramfetch stalled: no progress for 2 s',
      { stalled: true, diagnostics: { exitCode: null, signal: 'SIGKILL', outputTail: 'fetching' } },
      'during paramfetch: paramfetch stalled: no progress for 33 min',
    ],
    [
      'startDaemon',
      FailureType.DaemonNeverReady,
      'cuzk-daemon did not answer GetStatus within 4 s',
      { diagnostics: { daemonLogTail: 'loading SRS' } },
      'during warmup: cuzk-daemon did not answer GetStatus within 67 min',
    ],
  ] as const)(
    "says a host's %s stall or wait in real time, from the number the lifecycle gave the step",
    async (step, type, hostMessage, details, said) => {
      const failing = () =>
        Promise.reject(
          ApplicationFailure.create({ type, message: hostMessage, nonRetryable: true, details: [details] }),
        );
      const run = await env.start({ host: { [step]: failing } });
      const f = await run.failure();
      expect(f.type).toBe(type);
      expect(f.message).toContain(said);
      expect(f.message).not.toContain(hostMessage);
    },
  );

  it('records a taken offer without destroying anything', async () => {
    const run = await env.start({
      rent: () =>
        Promise.reject(
          ApplicationFailure.create({ type: FailureType.OfferUnavailable, message: 'taken', nonRetryable: true }),
        ),
    });
    expect((await run.failure()).type).toBe(FailureType.OfferUnavailable);
    expect(run.count('destroyInstance')).toBe(0);
    expect(outcome(run)).toEqual([expect.objectContaining({ failureType: FailureType.OfferUnavailable })]);
  });

  it('a Vast read that fails is no evidence about the host: waited out, shown in the status, the host kept', async () => {
    const run = await env.start(
      {
        instanceState: (n) =>
          n >= 2 && n < 8 ? { status: null, dph: 0, unreadable: 'HTTP 503 (stub)' } : { status: 'running', dph: 0.5 },
      },
      { watch: { intervalSec: 0.2, vastPatienceSec: 600 } },
    );
    const status = () => env.client.workflow.getHandle(run.workflowId).query(lifecycleStatusQuery);
    await until(
      'the outage in the status',
      async () => (await status()).vastUnreadable?.lastError === 'HTTP 503 (stub)',
    );
    await until(
      'Vast read again',
      async () => run.count('instanceState') > 9 && (await status()).vastUnreadable === null,
    );
    expect((await status()).stage).toBe('promoted');
    await cancelPromoted(run);
  });

  it("Vast unreadable past the watch's patience ends VastApiError, and the instance is destroyed", async () => {
    const run = await env.start(
      { instanceState: () => ({ status: null, dph: 0, unreadable: 'HTTP 502 (stub)' }) },
      { watch: { intervalSec: 0.2, vastPatienceSec: 1 } },
    );
    const f = await run.failure();
    expect(f.type).toBe(FailureType.VastApiError);
    // Said in real time: the patience of 1 s on the stub clock is 17 real minutes.
    expect(f.message).toMatch(/Vast could not be read for \d+ min \(patience 17 min\)/);
    expect(run.count('destroyInstance')).toBe(1);
  });

  it("a failed rent still sweeps the lifecycle's label, and a found instance counts as destroyed", async () => {
    const run = await env.start({
      rent: () =>
        Promise.reject(
          ApplicationFailure.create({
            type: FailureType.VastApiError,
            message: 'create lost (stub)',
            nonRetryable: true,
          }),
        ),
      destroyLabelled: () => ({ destroyed: [31_000_001] }),
    });
    expect((await run.failure()).type).toBe(FailureType.VastApiError);
    expect(run.count('destroyInstance')).toBe(0);
    expect(run.count('destroyLabelled')).toBe(1);
    expect(outcome(run)).toEqual([expect.objectContaining({ failureType: FailureType.VastApiError, destroyed: true })]);
  });
});
