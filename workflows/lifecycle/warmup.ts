import type { BenchmarkPlan } from '../domain/policy/concurrency.js';
import type { LifecycleInput } from '../domain/types.js';
import type { HostSteps } from './host-steps.js';
import type { Journal } from './journal.js';

/**
 * Warm-up proof, then [restart with full partition workers -> post-restart warm-up]. Making the PCE
 * cache with many partition workers OOM-killed low-RAM hosts, so a host without it warms up with few.
 */
export async function warmUp(input: LifecycleInput, journal: Journal, host: HostSteps, plan: BenchmarkPlan) {
  const t = input.timeouts;
  const { pceCached } = await host.inspect();
  const warmupWorkers = pceCached ? plan.partitionWorkers : plan.warmupPartitionWorkers;
  await journal.enter('warmup', t.daemonReadySec + t.proofDeadlineSec, { partitionWorkers: warmupWorkers, pceCached });
  await host.startDaemon(warmupWorkers);
  await host.warmupProof('warmup', warmupWorkers);
  if (warmupWorkers === plan.partitionWorkers) return;
  await journal.enter('restart', t.daemonReadySec, { partitionWorkers: plan.partitionWorkers });
  await host.startDaemon(plan.partitionWorkers);
  // The first proof after a restart is slow (kernel compile, PCE re-extract): keep it out of the timed batch.
  await journal.enter('post_restart_warmup', t.proofDeadlineSec);
  await host.warmupProof('post_restart_warmup', plan.partitionWorkers);
}
