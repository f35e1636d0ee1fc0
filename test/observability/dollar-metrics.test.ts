import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetRegistry } from '../../workers/setup/metrics-registry.js';
import type { CostFigures } from '../../workflows/domain/policy/cost.js';
import { inputsOf, type LogicEnv, type Run, startLogicEnv, until } from '../logic/harness.js';

/**
 * What the lifecycle reports through its metrics sink, by the real workflow code with stub activities:
 * `fleet_gpu_dollars_total` adds each GPU-$ once, at the figure the lifecycle records in the store, and
 * its `outcome="killed", phase="before_verdict"` series is the waste (docs/operating.md: rentals killed
 * before a promotion). Each case rents a GPU model of its own, so the process's registry tells them apart.
 */
let env: LogicEnv;
beforeAll(async () => {
  env = await startLogicEnv();
});
afterAll(async () => env?.close());

/** A watch that samples every 0.2 s and judges a 2-sample window. */
const FAST_WATCH = { watch: { intervalSec: 0.2, windowSamples: 2, degradedSamples: 2 } };

async function dollars(gpu: string): Promise<Record<string, number>> {
  const { values } = await fleetRegistry().gpuDollars.get();
  return Object.fromEntries(
    values.filter((v) => v.labels.gpu === gpu).map((v) => [`${v.labels.outcome}/${v.labels.phase}`, v.value]),
  );
}

/** The cost each store write of the run carried (promotion, kill). */
const recordedCosts = (run: Run) => inputsOf(run, 'recordOutcome').map((o) => o.cost as CostFigures | undefined);

describe.concurrent('GPU-$ in the metrics, as the lifecycle counts them', () => {
  it('a kill before a promotion: all of its cost is waste, to the figure in the store', async () => {
    const gpu = `metrics-${randomUUID().slice(0, 8)}`;
    const run = await env.start({ hostConnects: false, offer: { gpuName: gpu } });
    await run.failure();
    const [kill] = recordedCosts(run);
    expect(kill?.totalUsd).toBeGreaterThan(0);
    await until('the kill counted', async () => ((await dollars(gpu))['killed/before_verdict'] ?? 0) > 0);
    const d = await dollars(gpu);
    expect(d['killed/before_verdict']).toBeCloseTo(kill?.totalUsd ?? NaN, 6);
    expect(d['promoted/before_verdict']).toBe(0);
    expect(d['killed/production']).toBe(0);
  });

  it('a kill after a promotion adds only its production: the verdict is not counted twice, nor as waste', async () => {
    const gpu = `metrics-${randomUUID().slice(0, 8)}`;
    // A token within the retire margin: promoted, then retired by the watch's first sample (killed).
    const expiresAt = new Date(Date.now() + 30 * 60_000).toISOString();
    const run = await env.start({ hostTokenExpiresAt: expiresAt, offer: { gpuName: gpu } }, FAST_WATCH);
    await run.failure();
    const [atVerdict, atKill] = recordedCosts(run);
    expect(atKill?.productionUsd).toBeGreaterThan(0);
    await until('the kill counted', async () => ((await dollars(gpu))['killed/production'] ?? 0) > 0);
    const d = await dollars(gpu);
    expect(d['promoted/before_verdict']).toBeCloseTo(atVerdict?.beforeVerdictUsd ?? NaN, 6);
    expect(d['killed/production']).toBeCloseTo(atKill?.productionUsd ?? NaN, 6);
    expect(d['killed/before_verdict']).toBe(0);
    // Every dollar the lifecycle recorded, once (each figure is rounded to the micro-dollar on its own).
    expect((d['promoted/before_verdict'] ?? 0) + (d['killed/production'] ?? 0)).toBeCloseTo(atKill?.totalUsd ?? NaN, 5);
  });
});
