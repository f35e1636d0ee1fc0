import { FailureType } from '../../../workflows/domain/failures.js';
import { proofsPerHour } from '../../../workflows/domain/policy/rate.js';
import type { LifecycleInput } from '../../../workflows/domain/types.js';
import { watchLimits } from '../../../workflows/domain/policy/watch-limits.js';
import type { MarketOffer } from '../market.js';
import { rateAt } from '../market-score.js';
import type { Ending } from './lifecycle.js';

/** The course of production: what the host delivers, and what the watch sees. */
export interface ProductionFacts {
  m: MarketOffer;
  runningAtSec: number;
  promotedAtSec: number;
  /** Benchmark proofs completed (the daemon's crash counts them). */
  benchCompleted: number;
  /** The price Vast bills, read after renting: the watch's baseline. */
  billedDph: number;
  /** Hours before a host proves in the market's model (its degradation counts from there). */
  bootH: number;
}

/**
 * A promoted host under its watch (workflows/lifecycle/watch.ts): a sample every `watch.intervalSec`;
 * a lost host or crashed daemon ends it at the sample, then Vast's word (price over the ceiling), then
 * the daemon's rate over the last `windowSamples` intervals under the floor for `degradedSamples` samples.
 * The floor and the ceiling are the watch's own (`watchLimits`). Null: it lasts the day.
 */
export function watchCourse(f: ProductionFacts, input: LifecycleInput, dayEndSec: number): Ending | null {
  const w = input.watch;
  const { floor, maxDph: ceiling } = watchLimits(input, f.billedDph);
  const m = f.m;
  const preemptAt = m.preemptAfterH === null ? Infinity : f.runningAtSec + m.preemptAfterH * 3600;
  const riseAt = m.priceRiseAtH === null ? Infinity : f.runningAtSec + m.priceRiseAtH * 3600;
  const crashAt = productionCrashAt(f);
  const points: Array<{ completed: number; at: number }> = [];
  let low = 0;
  let completed = 0;
  let countedTo = f.promotedAtSec;
  for (let at = f.promotedAtSec + w.intervalSec; at < dayEndSec; at += w.intervalSec) {
    if (preemptAt <= at) return { atSec: at + input.timeouts.heartbeatSec, failureType: FailureType.HostLost };
    if (crashAt <= at) return { atSec: at, failureType: FailureType.DaemonCrashed };
    if (riseAt <= at && f.billedDph * 1.3 > ceiling) return { atSec: at, failureType: FailureType.PriceAboveBudget };
    completed += delivered(f, countedTo, at);
    countedTo = at;
    points.push({ completed: Math.floor(completed), at });
    if (points.length > w.windowSamples + 1) points.shift();
    if (points.length <= w.windowSamples) continue;
    const first = points[0]!;
    const rate = proofsPerHour(Math.floor(completed) - first.completed, (at - first.at) * 1000);
    low = rate < floor ? low + 1 : 0;
    if (low >= w.degradedSamples) return { atSec: at, failureType: FailureType.RateDegraded };
  }
  return null;
}

/** Proofs the host completes between two times (seconds into the day), at its true rate then. */
export function delivered(f: ProductionFacts, fromSec: number, toSec: number): number {
  const stepSec = 60;
  let sum = 0;
  for (let a = fromSec; a < toSec; a += stepSec) {
    const b = Math.min(toSec, a + stepSec);
    sum += (rateAt(f.m, ((a + b) / 2 - f.runningAtSec) / 3600, f.bootH) * (b - a)) / 3600;
  }
  return sum;
}

/**
 * When the daemon's crash fault fires in production: its engine counts completions since its start (the
 * post-restart warm-up, the benchmark's), so it dies at completion `crashAfterProofs + 1`.
 */
function productionCrashAt(f: ProductionFacts): number {
  const crashAfter = f.m.offer.sim.host.faults.crashAfterProofs;
  if (crashAfter === undefined) return Infinity;
  const left = crashAfter + 1 - (1 + f.benchCompleted);
  if (left <= 0) return f.promotedAtSec;
  let sum = 0;
  for (let a = f.promotedAtSec; a < f.promotedAtSec + 48 * 3600; a += 60) {
    sum += delivered(f, a, a + 60);
    if (sum >= left) return a + 60;
  }
  return Infinity;
}
