import { MARKET_PARAMS } from './market-params.js';

const F = MARKET_PARAMS.fleet;

/** One of the old policy's rentals still held: its machine, the searched price it budgeted, its verdict. */
export interface OldLive {
  machineId: number;
  /** $/h as the search showed it (8 GiB): what the seeds' manager budgeted. */
  searchedDph: number;
  /** The benchmark's rate once promoted; undefined while it benchmarks. */
  promotedRate?: number;
}

export interface OldOffer {
  id: number;
  machine_id: number;
  /** The searched (8 GiB) price. */
  dph_total: number;
}

/**
 * The seeds' manager, one round, as a choice: the cheapest offers at the searched (8 GiB) price, skipping
 * machines marked bad or already held; in-flight hosts count as the minimum rate, promoted ones as
 * benchmarked; the budget is counted at the searched price. `minRate` and `targetRate` are on the
 * caller's clock (the real stack's compressed one, or real units). The real-stack market day and the
 * evaluator both call it.
 */
export function oldPolicyChoice(
  live: readonly OldLive[],
  offers: readonly OldOffer[],
  bad: ReadonlySet<number>,
  o: { minRate: number; targetRate: number },
): OldOffer[] {
  let benchmarks = live.filter((l) => l.promotedRate === undefined).length;
  let rate = live.reduce((a, l) => a + (l.promotedRate ?? 0), 0) + benchmarks * o.minRate;
  let dph = live.reduce((a, l) => a + l.searchedDph, 0);
  let count = live.length;
  const machines = new Set(live.map((l) => l.machineId));
  const chosen: OldOffer[] = [];
  for (const x of [...offers].sort((a, b) => a.dph_total - b.dph_total)) {
    if (rate >= o.targetRate || count >= F.maxInstances.value) break;
    if (benchmarks >= F.maxConcurrentBenchmarks.value) break;
    if (bad.has(x.machine_id) || machines.has(x.machine_id)) continue;
    if (dph + x.dph_total > F.maxDph.value + 1e-9) continue;
    chosen.push(x);
    machines.add(x.machine_id);
    rate += o.minRate;
    dph += x.dph_total;
    count++;
    benchmarks++;
  }
  return chosen;
}
