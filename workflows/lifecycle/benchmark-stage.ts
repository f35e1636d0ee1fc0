import { patched } from '@temporalio/workflow';
import { realReport } from '../domain/policy/clock.js';
import type { BenchmarkPlan } from '../domain/policy/concurrency.js';
import { benchRate, type Standing } from '../domain/policy/early-promote-plan.js';
import type { BenchmarkReport, LifecycleInput, RentedInstance } from '../domain/types.js';
import { batchFor, benchmarkAgainstTimer } from './benchmark.js';
import type { HostSteps } from './host-steps.js';
import type { Journal } from './journal.js';

/** patched() id of reading the machine's standing (probation) before the benchmark; early promote rides with it. */
export const VERDICTS_PATCH = 'early-promote-and-probation';

/**
 * The timed benchmark: the machine's standing decides whether early promote may cut it short, the
 * workflow's timer bounds it, and its report comes back in real units with the rate it shows.
 */
export async function benchmarkStage(
  input: LifecycleInput,
  journal: Journal,
  host: HostSteps,
  inst: RentedInstance,
  plan: BenchmarkPlan,
  overridden: boolean,
): Promise<{ report: BenchmarkReport; rate: number }> {
  // A machine back from an expired mark is on probation: it proves its whole batch (no early promote).
  const standing: Standing = patched(VERDICTS_PATCH)
    ? (await journal.store.machineStanding({ machineId: inst.offer.machineId })).standing
    : 'good';
  journal.status.probation = standing === 'probation';
  journal.view.planned(plan.concurrency);
  const batch = batchFor(input, plan, inst.offer.numGpus, overridden, standing);
  await journal.enter('benchmark', input.timeouts.benchmarkSec, {
    proofs: input.benchmarkProofs,
    concurrency: plan.concurrency,
    ...(standing === 'probation' ? { probation: true } : {}),
    // The bar in real proofs/h, as an operator reads it (the host's batch carries it on the host's clock).
    ...(batch.earlyPromote ? { earlyPromote: { ...batch.earlyPromote, minRate: input.minRate } } : {}),
  });
  journal.benchmarkStarted(input.benchmarkProofs);
  // The host measures on its own clock; from here on the report is in real units (policy/clock.ts).
  const hostReport = await benchmarkAgainstTimer(
    (b) => host.runBenchmark(b),
    batch,
    input.timeouts.benchmarkSec,
    input.timeScale,
  );
  const report = realReport(hostReport, input.timeScale);
  const rate = benchRate(report);
  await journal.benchmarked(inst, report, rate);
  return { report, rate };
}
