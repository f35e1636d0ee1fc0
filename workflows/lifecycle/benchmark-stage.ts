import { realDuration, realReport } from '../domain/policy/clock.js';
import type { BenchmarkPlan } from '../domain/policy/concurrency.js';
import { benchRate, type Standing } from '../domain/policy/early-promote-plan.js';
import type { BenchmarkReport, LifecycleInput, RentedInstance } from '../domain/types.js';
import { batchFor, benchmarkAgainstTimer } from './benchmark.js';
import type { HostSteps } from './host-steps.js';
import type { Journal } from './journal.js';

/**
 * The machine's standing decides early promote; a machine back from an expired mark is on probation (its
 * whole batch). A store that does not answer within its first round gives the conservative choice, the
 * same as probation, with why in the benchmark's event and the read's failure in history.
 */
async function readStanding(journal: Journal, inst: RentedInstance): Promise<{ standing: Standing; unread?: string }> {
  return journal.machineStanding(inst.offer.machineId);
}

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
  const { standing, unread } = await readStanding(journal, inst);
  journal.onProbation(standing === 'probation' && unread === undefined);
  journal.view.planned(plan.concurrency);
  const batch = batchFor(input, plan, inst.offer.numGpus, overridden, standing);
  // Recorded, never awaited: the batch, its verdict and a kill's destroy do not wait for Postgres.
  await journal.enter('benchmark', input.timeouts.benchmarkSec, {
    proofs: input.benchmarkProofs,
    concurrency: plan.concurrency,
    ...(standing === 'probation' && unread === undefined ? { probation: true } : {}),
    ...(unread !== undefined ? { standingUnread: `${unread}: full batch, no early promote` } : {}),
    // The bar in real proofs/h, as an operator reads it (the host's batch carries it on the host's clock).
    ...(batch.earlyPromote ? { earlyPromote: { ...batch.earlyPromote, minRate: input.minRate } } : {}),
  });
  journal.benchmarkStarted(input.benchmarkProofs);
  // The host measures on its own clock; from here on the report is in real units (policy/clock.ts).
  const hostReport = await benchmarkAgainstTimer((b) => host.runBenchmark(b), batch, {
    benchmarkSec: input.timeouts.benchmarkSec,
    heartbeatSec: input.timeouts.heartbeatSec,
    clock: input.clock,
    unheardSince: () => host.unheardSince(),
    onUnheard: (u) => {
      void journal.note(
        `benchmark deadline not heard: ${u.why}; listening ${realDuration(u.extendSec, input.clock)} for the host's kept batch`,
        { ...u },
      );
    },
  });
  journal.throwIfRefused();
  const report = realReport(hostReport, input.clock);
  const rate = benchRate(report);
  await journal.benchmarked(inst, report, rate);
  return { report, rate };
}
