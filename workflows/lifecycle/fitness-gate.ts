import { killFailure } from '../classify.js';
import { FailureType } from '../domain/failures.js';
import { judgeFitness } from '../domain/policy/fitness.js';
import type { LifecycleInput, OfferFacts } from '../domain/types.js';
import type { HostSteps } from './host-steps.js';
import type { Journal } from './journal.js';

/**
 * The host's first steps: measure it in seconds and judge it against the offer, then make sure the
 * benchmark's input is there, all before ~4 minutes of paramfetch are paid for. An unfit host ends as
 * HostUnfit with what was measured against what the offer claimed; a host we could not read (and found
 * no evidence against) as HostUnreadable; a missing input as BenchInputMissing (our configuration) or
 * BenchInputFetchFailed (the host's network).
 */
export async function fitnessGate(
  input: LifecycleInput,
  offer: OfferFacts,
  journal: Journal,
  host: HostSteps,
): Promise<void> {
  if (!input.fitness.enabled) return;
  const p = input.fitness;
  await journal.enter('fitness', input.timeouts.hostConnectSec);
  const measured = await host.checkFitness({
    diskProbeMiB: p.diskProbeMiB,
    downloadSampleMiB: p.downloadSampleMiB,
    probeSec: p.probeSec,
  });
  const verdict = judgeFitness(measured, offer, p);
  const claimed = { gpuName: offer.gpuName, numGpus: offer.numGpus, gpuRamMb: offer.gpuRamMb ?? null };
  const evidence = { measured: verdict.figures, claimed, notJudged: verdict.notJudged, probeMs: measured.elapsedMs };
  if (verdict.outcome === 'unfit') {
    throw killFailure(FailureType.HostUnfit, `host unfit: ${verdict.problems.map((x) => x.message).join('; ')}`, {
      unfit: verdict.problems.map((x) => x.check),
      problems: verdict.problems,
      ...(verdict.unreadable.length > 0 ? { unreadable: verdict.unreadable } : {}),
      ...evidence,
    });
  }
  if (verdict.outcome === 'unreadable') {
    // Our reading failed, not the host: destroyed, inconclusive, with what it printed for a report.
    throw killFailure(
      FailureType.HostUnreadable,
      `host unreadable: ${verdict.unreadable.map((x) => x.message).join('; ')}`,
      { unreadable: verdict.unreadable, ...evidence },
    );
  }
  await journal.note('fit', evidence);
  const got = await host.ensureBenchInput(input.benchInput);
  await journal.note(`bench input from ${got.source}`, { ...got });
}
