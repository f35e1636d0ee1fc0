import type { BenchInputRequest } from './bench-input.js';
import { type BenchmarkInput, runBenchmark } from './benchmark.js';
import { type StartDaemonInput, startDaemon, warmupProof } from './daemon-steps.js';
import type { FitnessInput } from './fitness.js';
import { type GpuHostDeps, gpuHostContext, type StepInput } from './host.js';
import { checkFitness, ensureBenchInput, inspectHost, paramfetch } from './preparation.js';
import { collectDiagnostics, sampleDaemon, startProduction } from './production-steps.js';

// What the workflows name from here besides the activities.
export type { BenchmarkInput } from './benchmark.js';

/**
 * Activities that run on the rented machine itself, on its own task queue, each a function of the host
 * (these deps and what it keeps between steps) and its input. They heartbeat, so the workflow notices a
 * vanished host within one heartbeat timeout and can cancel a running batch.
 */
export function createGpuHostActivities(deps: GpuHostDeps) {
  const host = gpuHostContext(deps);
  return {
    checkFitness: (input: FitnessInput & StepInput) => checkFitness(host, input),
    ensureBenchInput: (input: BenchInputRequest & StepInput) => ensureBenchInput(host, input),
    paramfetch: (input: { stallSec: number } & StepInput) => paramfetch(host, input),
    inspectHost: (input: StepInput = {}) => inspectHost(host, input),
    startDaemon: (input: StartDaemonInput) => startDaemon(host, input),
    warmupProof: (input: { step: string; proofDeadlineSec: number } & StepInput) => warmupProof(host, input),
    runBenchmark: (input: BenchmarkInput) => runBenchmark(host, input),
    collectDiagnostics: () => collectDiagnostics(host),
    startProduction: (input: { concurrency: number } & StepInput) => startProduction(host, input),
    sampleDaemon: (input: StepInput = {}) => sampleDaemon(host, input),
  };
}

export type GpuHostActivities = ReturnType<typeof createGpuHostActivities>;
