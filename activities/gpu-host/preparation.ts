import type { FitnessMeasurement } from '../../workflows/domain/policy/fitness.js';
import { type BenchInputRequest, type BenchInputResult, ensureBenchInput as fetchBenchInput } from './bench-input.js';
import { type FitnessInput, measureFitness } from './fitness.js';
import type { GpuHostContext, StepInput } from './host.js';
import { runParamfetch } from './paramfetch.js';

/** The gate's measurements, right after the host connects (workflows/lifecycle/fitness-gate.ts judges them). */
export async function checkFitness(host: GpuHostContext, input: FitnessInput & StepInput): Promise<FitnessMeasurement> {
  return host.steps.run(input.stepId, (ctx) =>
    measureFitness({ spawn: host.deps.spawn, ...host.deps.fitness }, input, ctx),
  );
}

/** Puts the benchmark's C1 input at C1_PATH (image, cache or download) before paramfetch. */
export async function ensureBenchInput(
  host: GpuHostContext,
  input: BenchInputRequest & StepInput,
): Promise<BenchInputResult> {
  return host.steps.run(input.stepId, async (ctx) => {
    const res = await fetchBenchInput(host.deps.c1Path, host.deps.fitness.paramCacheDir, input, ctx);
    host.forgetC1();
    return res;
  });
}

/** Fetches the proof parameters; no output for `stallSec` is a stalled download (paramfetch.ts). */
export async function paramfetch(
  host: GpuHostContext,
  input: { stallSec: number } & StepInput,
): Promise<{ elapsedMs: number }> {
  return host.steps.run(input.stepId, async (ctx) => {
    const { paramfetchCommand, spawn } = host.deps;
    const res = await runParamfetch(paramfetchCommand, host.paramfetchLog, input.stallSec * 1000, spawn, ctx);
    return { elapsedMs: res.elapsedMs };
  });
}

/** Also the workflow's probe of a host whose step timed out: that call has no step id and keeps nothing. */
export async function inspectHost(host: GpuHostContext, input: StepInput = {}): Promise<{ pceCached: boolean }> {
  return host.steps.run(input.stepId, async () => ({ pceCached: await host.deps.supervisor.pceCached() }));
}
