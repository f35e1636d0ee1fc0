import path from 'node:path';
import { type C1Input, loadC1 } from './c1-input.js';
import { CuzkClient } from './cuzk-client.js';
import type { DaemonSupervisor } from './daemon.js';
import type { FitnessProbes } from './fitness.js';
import type { ProductionRunner } from './production.js';
import type { SpawnHostProcess } from './spawn.js';
import { StepKeeper } from './step-keeper.js';

export interface GpuHostDeps {
  supervisor: DaemonSupervisor;
  production: ProductionRunner;
  cuzkAddress: string;
  paramfetchCommand: string[];
  /** How paramfetch is started (default: a child of this process). */
  spawn?: SpawnHostProcess;
  c1Path: string;
  minerId: number;
  workDir: string;
  /** The fitness gate's probes (nvidia-smi, df, dd, a sample URL) and the parameter cache they measure. */
  fitness: FitnessProbes;
}

/** What a step activity takes besides its own input: the id the workflow gives the step (step-keeper.ts). */
export interface StepInput {
  stepId?: string;
}

/** The deps and what the host keeps between its activities: one daemon client, the C1 input, its steps. */
export interface GpuHostContext {
  deps: GpuHostDeps;
  cuzk(): CuzkClient;
  /** The C1 input, read once from C1_PATH; `forgetC1` after that file is replaced. */
  c1(): Promise<C1Input>;
  forgetC1(): void;
  /** Long steps run under the keeper, so a Temporal outage that loses an attempt does not lose the work. */
  steps: StepKeeper;
  paramfetchLog: string;
}

export function gpuHostContext(deps: GpuHostDeps): GpuHostContext {
  let client: CuzkClient | null = null;
  let c1: C1Input | null = null;
  return {
    deps,
    cuzk: () => (client ??= new CuzkClient(deps.cuzkAddress)),
    c1: async () => (c1 ??= await loadC1(deps.c1Path)),
    forgetC1: () => {
      c1 = null;
    },
    steps: new StepKeeper(),
    paramfetchLog: path.join(deps.workDir, 'paramfetch.log'),
  };
}
