import { type SimOffer, scaledMs } from '../scenario.js';
import { DEFAULT_ALLOCATED_STORAGE_GB, offerPriceFields } from './pricing.js';
import { matchesQuery, QueryError, sortOffers } from './query.js';
import { offerSample, withNulls } from './fields.js';
import type { Sink } from './mangle.js';
import { type ApiCall, json, type VastState } from './state.js';

// Priced for the search's allocated_storage, as Vast does: the same offer is dearer for a bigger disk.
function publicOffer(st: VastState, o: SimOffer, allocatedGb: number) {
  return withNulls(
    {
      ...offerSample(o, Date.now() / 1000),
      ...offerPriceFields(o, allocatedGb),
      min_bid: st.market.minBid(o, Date.now() - scaledMs(o.sim.market.searchLagSec, st.scale)),
      rentable: !st.taken.has(o.id),
      rented: st.taken.has(o.id),
    },
    o.sim.offerNullFields,
  );
}

/** POST /api/v0/bundles/: the offer search, rentable offers only unless the query names `rentable`. */
export function searchOffers(st: VastState, call: ApiCall, res: Sink): void {
  const q = call.body as Record<string, unknown>;
  const rentableOnly = !('rentable' in q);
  const allocated = q.allocated_storage ?? DEFAULT_ALLOCATED_STORAGE_GB;
  if (typeof allocated !== 'number' || !(allocated > 0))
    return json(res, 400, {
      success: false,
      error: 'invalid_args',
      msg: 'allocated_storage must be a number of GB',
    });
  let list = [...st.offers.values()]
    .map((o) => publicOffer(st, o, allocated))
    .filter((o) => !rentableOnly || o.rentable);
  try {
    list = list.filter((o) => matchesQuery(o, q));
  } catch (err) {
    if (err instanceof QueryError) return json(res, 400, { success: false, error: 'invalid_args', msg: err.message });
    throw err;
  }
  const sorted = sortOffers(list, q.order);
  const limit = typeof q.limit === 'number' ? q.limit : 64;
  return json(res, 200, { offers: sorted.slice(0, limit) });
}
