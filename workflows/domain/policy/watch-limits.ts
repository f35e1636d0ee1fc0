import type { LifecycleInput } from '../types.js';

/**
 * What a promoted host is held to (the watch, workflows/lifecycle/watch.ts; the policy evaluator reads the
 * same): its rate's floor, 80 % of `minRate` unless the lifecycle names one, and its price's ceiling, 20 %
 * over the price Vast bills it (storage for our disk included, read after renting) unless the lifecycle
 * names one. An interruptible rental's ceiling is its bid cap plus storage (`bidCeilingDph`): a raised bid
 * is not a price rise.
 */
export function watchLimits(
  input: Pick<LifecycleInput, 'minRate' | 'watch'>,
  billedDph: number,
  bidCeilingDph: number | null = null,
): { floor: number; maxDph: number } {
  const w = input.watch;
  return {
    floor: w.floorRate ?? Math.round(input.minRate * 0.8 * 100) / 100,
    maxDph: w.maxDph ?? bidCeilingDph ?? Math.round(billedDph * 1.2 * 1000) / 1000,
  };
}
