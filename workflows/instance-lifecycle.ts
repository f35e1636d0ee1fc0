import { CancellationScope, ContinueAsNew, isCancellation, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { VastActivities } from '../activities/vast/activities.js';
import { awaitRunningOptions, vastApiOptions } from './activity-options.js';
import { classify, fromCall, withOperatorsWords } from './classify.js';
import { benchmarkStage } from './lifecycle/benchmark-stage.js';
import { implausibleClaim } from './lifecycle/claims-check.js';
import { killInstance } from './lifecycle/cleanup.js';
import { fitnessGate } from './lifecycle/fitness-gate.js';
import { HostSteps } from './lifecycle/host-steps.js';
import { Journal } from './lifecycle/journal.js';
import { killedFailure } from './lifecycle/kill-report.js';
import { answerOperators } from './lifecycle/operator.js';
import { marketOrHost } from './lifecycle/preemption.js';
import { answerScaler, pricedOut } from './lifecycle/keep-by-dollar.js';
import { judge, type PromoteOverride } from './lifecycle/verdict.js';
import { warmUp } from './lifecycle/warmup.js';
import { watchPromoted } from './lifecycle/watch.js';
import { planBenchmark } from './domain/policy/concurrency.js';
import { withDefaults } from './domain/policy/defaults.js';
import { hostTaskQueue, instanceLabel, rentalKey } from './domain/task-queues.js';
import type { KillRequest } from './definitions.js';
import type { LifecycleInput, LifecycleRequest, LifecycleResult, RentedInstance } from './domain/types.js';
import { vastSummary } from './ui/summaries.js';
import { summarized } from './ui/summarized.js';

const vast = summarized(proxyActivities<VastActivities>(vastApiOptions), vastSummary);

interface Lifecycle {
  input: LifecycleInput;
  label: string;
  journal: Journal;
  host: HostSteps;
  override: { promote: PromoteOverride | null; kill: KillRequest | null };
}

/**
 * One rented GPU instance, from renting the offer to promotion or destruction. The runbook:
 * rent -> running -> fitness -> paramfetch -> warmup [-> restart -> warmup] -> benchmark against the timer -> judge
 * -> promote -> watch; whatever fails on the way -> kill (destroy, record why).
 */
export async function instanceLifecycle(request: LifecycleRequest): Promise<LifecycleResult> {
  const input = withDefaults(request);
  const { workflowId, firstExecutionRunId } = workflowInfo();
  // One rental, one key (README, "One identity per rental"), carried through continue-as-new.
  const rental = input.resume?.rentalKey ?? rentalKey(workflowId, firstExecutionRunId);
  const label = instanceLabel(rental);
  const journal = new Journal(input, { rentalKey: rental, workflowId });
  const host = new HostSteps(label, input, journal);
  const lc: Lifecycle = { input, label, journal, host, override: { promote: null, kill: null } };
  answerOperators(journal, lc.override);
  const orders = answerScaler();
  try {
    const inst = input.resume?.rented ?? (await rentBenchmarkAndJudge(lc));
    return await watchPromoted(request, input, journal, host, inst, orders);
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    // An interruptible rental's host failing may be the market stopping it: Vast is asked before a verdict.
    const classified = await marketOrHost(classify(err), journal.rented, journal.status.stage);
    // Read after the await: the kill request's signal precedes its cancel in history.
    const failure = withOperatorsWords(classified, lc.override.kill);
    const failedStage = journal.status.stage;
    // Cleanup runs even when the workflow itself was cancelled: a rented instance bills until destroyed.
    await CancellationScope.nonCancellable(() => killInstance(lc, failure));
    const ended = killedFailure(failure, failedStage, journal, input);
    if (isCancellation(err)) throw err;
    throw ended;
  }
}

/** Rent, bring the host up, warm it up, benchmark it and promote it: or throw why not. */
async function rentBenchmarkAndJudge({ input, label, journal, host, override }: Lifecycle): Promise<RentedInstance> {
  const t = input.timeouts;
  await journal.offerTaken(label);
  await journal.enter('provisioning');
  const inst = await fromCall('vast', () =>
    vast.rentOffer({
      offerId: input.offerId,
      label,
      image: input.image,
      diskGb: input.diskGb,
      hostTaskQueue: hostTaskQueue(label),
      ...(input.bid ? { bid: input.bid } : {}),
    }),
  );
  await journal.rentedInstance(label, inst);

  await journal.enter('waiting_running', t.waitRunningSec);
  const deadlineMs = Date.now() + t.waitRunningSec * 1000;
  await fromCall('vast', () =>
    summarized(proxyActivities<VastActivities>(awaitRunningOptions(t)), vastSummary).awaitRunning({
      instanceId: inst.instanceId,
      deadlineMs,
    }),
  );

  await fitnessGate(input, inst.offer, journal, host);
  await journal.enter('paramfetch', t.paramfetchSec);
  await host.paramfetch();
  const plan = planBenchmark(inst.offer.numGpus, inst.offer.cpuRamMb, input.concurrency);
  await warmUp(input, journal, host, plan);

  const { report, rate } = await benchmarkStage(input, journal, host, inst, plan, override.promote !== null);

  await journal.enter('evaluating');
  // A claim the host's GPUs cannot make is no measurement: killed before any verdict or override.
  const implausible = implausibleClaim(inst, rate, report.timings, 'benchmark');
  if (implausible) throw implausible;
  const verdict = judge(report, rate, input, override.promote, inst.offer.numGpus);
  if ('kill' in verdict) throw verdict.kill;
  // Over minRate (or not shown under it), and kept only by the dollar; an operator's override promotes whatever it costs.
  const keepRate = verdict.keepAtRate ?? rate;
  const priced = override.promote ? null : await pricedOut(input, journal, inst, keepRate);
  if (priced) throw priced;
  // The override arrived after the batch stopped early, which also stopped the daemon: prove again first.
  if (verdict.restartDaemonFirst) await host.startDaemon(plan.partitionWorkers);
  await journal.promoted(
    inst,
    rate,
    verdict.promote,
    report.promotedEarly && !override.promote ? { earlyPromote: report.promotedEarly } : undefined,
  );
  return inst;
}
