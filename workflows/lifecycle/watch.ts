import { condition, makeContinueAsNewFunc, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { VastActivities } from '../../activities/vast/activities.js';
import { vastApiOptions } from '../activity-options.js';
import { fromCall, killFailure } from '../classify.js';
import { FailureType } from '../domain/failures.js';
import { planBenchmark } from '../domain/policy/concurrency.js';
import { type Clock, realDuration, realMs, realSec } from '../domain/policy/clock.js';
import { hostTokenRetireAtMs } from '../domain/policy/host-token-expiry.js';
import { proofsPerHour } from '../domain/policy/rate.js';
import { watchLimits } from '../domain/policy/watch-limits.js';
import type { LifecycleInput, LifecycleRequest, RentedInstance, ResumeState, WatchPolicy } from '../domain/types.js';
import { implausibleClaim } from './claims-check.js';
import type { HostSteps } from './host-steps.js';
import { vastSummary } from '../ui/summaries.js';
import { summarized } from '../ui/summarized.js';
import { bidCeilingDph, watchBid } from './preemption.js';
import type { Journal } from './journal.js';
import { type RetireOrder, retiredFailure } from './keep-by-dollar.js';

const vast = summarized(proxyActivities<VastActivities>(vastApiOptions), vastSummary);

type InstanceState = Awaited<ReturnType<VastActivities['instanceState']>>;
type Sample = { completed: number; at: number };

/** What the watch carries from sample to sample, and through continue-as-new. */
type WatchState = Pick<ResumeState, 'points' | 'lowSamples'> & { vastUnreadableSince: number | null };

/** The limits a promoted instance is held to, at the price Vast bills it (read after renting). */
function limits(input: LifecycleInput, inst: RentedInstance) {
  return watchLimits(input, inst.offer.dphTotal, bidCeilingDph(inst));
}

/**
 * Keeps a promoted instance honest: samples the daemon's counters on a cadence and kills it when its
 * rate stays under the floor, when it stops answering, or when its price rises above the budget.
 * Continues as new every `samplesPerRun` samples so history stays small.
 */
export async function watchPromoted(
  request: LifecycleRequest,
  input: LifecycleInput,
  journal: Journal,
  host: HostSteps,
  inst: RentedInstance,
  orders: { retire: RetireOrder | null },
): Promise<never> {
  const w = input.watch;
  const state: WatchState = {
    points: input.resume?.points ?? [],
    lowSamples: input.resume?.lowSamples ?? 0,
    vastUnreadableSince: input.resume?.vastUnreadableSince ?? null,
  };
  if (!input.resume)
    await host.startProduction(planBenchmark(inst.offer.numGpus, inst.offer.cpuRamMb, input.concurrency).concurrency);
  for (let samples = 0; ; samples++) {
    journal.throwIfRefused();
    // A new run drops this one's pending writes: while the store is out the watch goes on watching, and
    // continues as new once its records are written (or when the server says history is too long).
    if ((samples >= w.samplesPerRun && !journal.writing) || workflowInfo().continueAsNewSuggested) {
      await journal.recorded();
      const { rentalKey } = journal.ids;
      const rentedAtMs = journal.view.rentedAtMs;
      const carried = journal.cost.ledger();
      const resume = {
        rentalKey,
        rented: inst,
        seq: journal.seq,
        benchRate: journal.status.rate,
        ...state,
        ...(rentedAtMs !== null ? { rentedAtMs } : {}),
        ...(carried ? { cost: carried } : {}),
      };
      // The run's search attributes go along explicitly (left out, the next run lost Outcome and
      // LifecycleStage); the next run starts with the cost so far in its CostUsd (updated in the copy).
      const { typedSearchAttributes: attributes, memo } = workflowInfo();
      const typedSearchAttributes = attributes.updateCopy(journal.cost.attribute());
      await makeContinueAsNewFunc<(r: LifecycleRequest) => Promise<unknown>>({ typedSearchAttributes, memo })({
        ...request,
        resume,
      });
    }
    // The next sample, or at once the scaler's order to retire the host for a cheaper one (rebalancing).
    await condition(() => orders.retire !== null, w.intervalSec * 1000, {
      summary: `watch: next sample in ${realDuration(w.intervalSec, input.clock)}`,
    });
    if (orders.retire) throw retiredFailure(orders.retire);
    retireBeforeTokenExpiry(inst, w.intervalSec);
    const [sample, vastState] = await Promise.all([
      host.sampleDaemon(),
      fromCall('vast', () => vast.instanceState(inst.instanceId)),
    ]);
    const billed = journal.cost.ledger()?.dph;
    await watchBid(inst, vastState, journal.status.stage);
    checkVast(journal, input, inst, limits(input, inst).maxDph, state, vastState);
    if (journal.cost.ledger()?.dph !== billed) await journal.priceMoved(inst);
    const rate = windowRate(w, state, sample, input.clock);
    if (rate === null) continue;
    const implausible = implausibleClaim(inst, rate, [], 'production');
    if (implausible) throw implausible;
    journal.watchedRate(rate);
    const first = state.points[0];
    journal.view.watched(first ? sample.at - first.at : 0);
    const { floor } = limits(input, inst);
    state.lowSamples = rate < floor ? state.lowSamples + 1 : 0;
    if (state.lowSamples >= w.degradedSamples) {
      throw killFailure(
        FailureType.RateDegraded,
        `${rate} proofs/h for ${state.lowSamples} samples, under the floor of ${floor}`,
        {
          rate,
          floorRate: floor,
          samples: state.lowSamples,
          windowSec: realSec(w.windowSamples * w.intervalSec * 1000, input.clock),
        },
      );
    }
  }
}

/**
 * Ends the watch (destroy, nothing marked) before the host's token expires: past it the host could not
 * poll its queue and the lifecycle would end `HostLost` against a healthy machine. The scaler rents again.
 */
function retireBeforeTokenExpiry(inst: RentedInstance, intervalSec: number): void {
  const retireAtMs = hostTokenRetireAtMs(inst.hostTokenExpiresAt, intervalSec);
  if (retireAtMs === null || Date.now() < retireAtMs) return;
  throw killFailure(
    FailureType.HostTokenExpiring,
    `the host's token expires at ${inst.hostTokenExpiresAt}: retired before the host loses its queue ` +
      `(HOST_TOKEN_TTL_DAYS); nothing counted against the machine`,
    { hostTokenExpiresAt: inst.hostTokenExpiresAt },
  );
}

/** The daemon's rate over the last `windowSamples` intervals; null until the window is full. */
function windowRate(w: WatchPolicy, state: WatchState, sample: Sample, clock: Clock): number | null {
  // A counter that went backwards means the daemon restarted: start a new window.
  const last = state.points[state.points.length - 1];
  if (last && sample.completed < last.completed) state.points = [];
  state.points = [...state.points, { completed: sample.completed, at: sample.at }].slice(-(w.windowSamples + 1));
  const first = state.points[0];
  if (state.points.length <= w.windowSamples || !first) return null;
  return proofsPerHour(sample.completed - first.completed, realMs(sample.at - first.at, clock));
}

/** Kills on what Vast says (gone, stopped, price over budget); a Vast that cannot be read is waited out, bounded. */
function checkVast(
  journal: Journal,
  input: LifecycleInput,
  inst: RentedInstance,
  maxDph: number,
  state: WatchState,
  vs: InstanceState,
): void {
  const w = input.watch;
  // Our failure to read Vast is no evidence about the host: wait it out (bounded), shown in the status.
  if (vs.unreadable !== undefined) {
    state.vastUnreadableSince ??= Date.now();
    journal.vastUnreadable({ since: new Date(state.vastUnreadableSince).toISOString(), lastError: vs.unreadable });
    const outSec = Math.round((Date.now() - state.vastUnreadableSince) / 1000);
    if (outSec > w.vastPatienceSec) {
      const { clock } = input;
      throw killFailure(
        FailureType.VastApiError,
        `Vast could not be read for ${realDuration(outSec, clock)} (patience ${realDuration(w.vastPatienceSec, clock)}): ` +
          `the price of instance ${inst.instanceId} is unknown`,
        {
          unreadableSec: realSec(outSec * 1000, clock),
          vastPatienceSec: realSec(w.vastPatienceSec * 1000, clock),
          lastError: vs.unreadable,
        },
      );
    }
    return;
  }
  state.vastUnreadableSince = null;
  journal.vastUnreadable(null);
  if (vs.status !== 'running') {
    throw killFailure(FailureType.HostLost, `instance is ${vs.status ?? 'gone'} at Vast`, { actualStatus: vs.status });
  }
  // Count the time so far at the price billed until now, and on at what Vast bills now.
  journal.cost.repriced(vs.dph);
  if (vs.dph > maxDph) {
    throw killFailure(
      FailureType.PriceAboveBudget,
      `price rose to $${vs.dph}/h, above the budget of $${maxDph}/h (billed $${inst.offer.dphTotal}/h when rented)`,
      { dph: vs.dph, maxDph, rentedAt: inst.offer.dphTotal },
    );
  }
}
