import { DEFAULT_DISK_GB } from '../../../workflows/domain/policy/defaults.js';
import { offerQuery } from '../../../workflows/domain/policy/offer-filter.js';
import type { OfferCandidate } from '../../../workflows/domain/policy/offer-ranking.js';
import { matchesQuery, sortOffers } from '../../sim/vast/query.js';
import { MARKET_FILTER } from '../market-filter.js';
import type { MarketOffer } from '../market.js';

/** Listed at `atSec`, not yet taken by someone else: what the market offers, ours or not. */
export function listed(m: MarketOffer, atSec: number): boolean {
  return m.listedAtH * 3600 <= atSec && atSec < m.takenAtH * 3600;
}

/**
 * The Vast simulator's answer to the production search at `atSec` (infra/sim/vast/server.ts): listed
 * offers nobody holds, priced for our disk (`billed`) or for Vast's default 8 GiB (the old policy's
 * search), filtered by the query, cheapest first, at most the query's limit.
 */
export function searchMarket(
  market: readonly MarketOffer[],
  atSec: number,
  held: ReadonlySet<number>,
  billed: boolean,
): MarketOffer[] {
  const { allocated_storage: _disk, ...searched } = offerQuery(MARKET_FILTER, DEFAULT_DISK_GB);
  const query = billed ? offerQuery(MARKET_FILTER, DEFAULT_DISK_GB) : searched;
  const byRow = new Map<Record<string, unknown>, MarketOffer>();
  for (const m of market) {
    if (!listed(m, atSec) || held.has(m.offer.id)) continue;
    const row = { ...m.offer, dph_total: billed ? m.billedDph : m.searchedDph, rentable: true };
    if (matchesQuery(row, query)) byRow.set(row, m);
  }
  const limit = typeof query.limit === 'number' ? query.limit : 64;
  return sortOffers([...byRow.keys()], query.order)
    .slice(0, limit)
    .map((row) => byRow.get(row)!);
}

/** An offer as the scaler's search activity hands it over (activities/vast/search.ts). */
export function candidate(m: MarketOffer): OfferCandidate {
  return {
    offerId: m.offer.id,
    machineId: m.offer.machine_id,
    gpuName: m.offer.gpu_name,
    numGpus: m.offer.num_gpus,
    cpuRamMb: m.offer.cpu_ram,
    dphTotal: m.billedDph,
    searchedDph: m.billedDph,
  };
}
