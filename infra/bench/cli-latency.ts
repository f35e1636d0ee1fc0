import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { compressedLifecycle, startSimStack } from '../dev/sim-stack.js';
import { CatalogueSchema } from '../sim/scenario.js';
import { clockOf } from '../../workflows/domain/policy/clock.js';
import { DEFAULT_MIN_RATE } from '../../workflows/domain/policy/defaults.js';
import { CONTROL_TASK_QUEUE, lifecycleWorkflowId } from '../../workflows/domain/task-queues.js';
import { instanceLifecycle } from '../../workflows/index.js';
// @ts-expect-error plain JavaScript without types: the bin's own choice of entry (bin/entry.mjs)
import { chooseEntry } from '../../bin/entry.mjs';
import { log, pct, releaseAll, round } from './common.js';

/**
 * CLI latency: `gpu-fleet status <offer id>` as an operator types it, a fresh process each run, against
 * one running lifecycle on the dev server: the built CLI (dist/, what the bin runs when it is current)
 * and, for comparison, the TypeScript through tsx. Wall time of the whole process, start to exit.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);
/** Slow enough that the lifecycle is still running (benchmarking) through every measured run. */
const TIME_SCALE = 0.5;
/** A healthy host of the demo's catalogue. */
const OFFER_ID = 32740552;

export interface CliLatencyResult {
  runs: number;
  offerId: number;
  /** Milliseconds per `status` process: the build, and tsx for comparison. */
  distMs: { p50: number; p90: number; min: number; max: number };
  tsxMs: { p50: number; p90: number; min: number; max: number };
  /** The bar set for a read: under 500 ms (p50 of the built CLI). */
  underHalfSecond: boolean;
}

type Figures = CliLatencyResult['distMs'];

/** Wall ms of `n` processes, each started as an operator's shell would. */
async function timeRuns(n: number, argv: string[], env: NodeJS.ProcessEnv): Promise<Figures> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const { stdout } = await run(process.execPath, argv, { cwd: ROOT, env });
    ms.push(performance.now() - t0);
    if (!stdout.includes(lifecycleWorkflowId(OFFER_ID))) throw new Error(`status did not answer: ${stdout}`);
  }
  const sorted = ms.sort((a, b) => a - b);
  return {
    p50: round(pct(sorted, 0.5) ?? 0, 0),
    p90: round(pct(sorted, 0.9) ?? 0, 0),
    min: round(sorted[0] ?? 0, 0),
    max: round(sorted.at(-1) ?? 0, 0),
  };
}

/** Builds dist/ first when the bin would not run it (no build, or sources newer). */
async function ensureBuild(): Promise<void> {
  const entry = (chooseEntry as (root: string) => { run: string; why?: string })(ROOT);
  if (entry.run === 'dist') return;
  log(`cli: building dist/ (${entry.why ?? 'not current'})…`);
  await run('npm', ['run', 'build'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
}

export async function cliLatencyBench(runs: number): Promise<CliLatencyResult> {
  await ensureBuild();
  const catalogue = CatalogueSchema.parse(
    JSON.parse(readFileSync(path.join(ROOT, 'infra/sim/scenarios/demo.json'), 'utf8')),
  );
  const offer = catalogue.offers.find((o) => o.id === OFFER_ID);
  if (!offer) throw new Error(`offer ${OFFER_ID} is not in the demo catalogue`);
  process.env.SIM_TIME_SCALE = String(TIME_SCALE);
  const stack = await startSimStack([offer], { headless: true }, log);
  const workflowId = lifecycleWorkflowId(OFFER_ID);
  try {
    await stack.client.workflow.start(instanceLifecycle, {
      taskQueue: CONTROL_TASK_QUEUE,
      workflowId,
      args: [
        {
          offerId: OFFER_ID,
          minRate: DEFAULT_MIN_RATE,
          ...compressedLifecycle(TIME_SCALE),
          clock: clockOf(TIME_SCALE),
        },
      ],
    });
    const env = { ...process.env, TEMPORAL_ADDRESS: stack.temporal.address, NODE_OPTIONS: '' };
    // The built CLI as the bin runs it when dist/ is current (run directly: an edit during the bench would
    // make the bin fall back to tsx and mix the two), then tsx. One unmeasured run first: a fresh server's
    // first connection is not what an operator waits on.
    const built = ['dist/workers/cli.js', 'status', String(OFFER_ID)];
    await timeRuns(1, built, env);
    const distMs = await timeRuns(runs, built, env);
    const tsxMs = await timeRuns(runs, ['--import', 'tsx', 'workers/cli.ts', 'status', String(OFFER_ID)], env);
    log(`cli: status p50 ${distMs.p50} ms built, ${tsxMs.p50} ms through tsx`);
    return { runs, offerId: OFFER_ID, distMs, tsxMs, underHalfSecond: distMs.p50 < 500 };
  } finally {
    await releaseAll(stack, [workflowId], 60_000);
    await stack.close();
  }
}
