import type { BidHistory, BidPolicy } from '../types.js';

/** Vast's create and change-bid accept a `price` from $0.001/h (vast-api.md §1.4; the change-bid OpenAPI page). */
export const MIN_BID_DPH = 0.001;
/** The most events of each kind a rental carries as evidence: enough to show a market's move, small in history. */
export const BID_HISTORY_MAX = 20;

/**
 * The bid to place for a `min_bid`: the margin above it, rounded up to a tenth of a cent so it is never
 * under min_bid × (1 + margin). Null when that bid would pass the policy's cap: then we do not bid.
 */
export function bidFor(minBidDph: number, policy: BidPolicy): number | null {
  const raw = Math.max(MIN_BID_DPH, minBidDph * (1 + policy.marginPct / 100));
  const price = Math.ceil(raw * 1000 - 1e-6) / 1000;
  return price <= policy.maxBidDph + 1e-9 ? price : null;
}

/**
 * Whether a rental bidding `priceDph` should raise its bid now: `min_bid` has come within half the
 * margin of it (one more step of the market and Vast stops the instance), and the new bid fits the cap.
 * Returns the new bid, or null to leave it.
 */
export function raiseTo(priceDph: number, minBidDph: number | null, policy: BidPolicy): number | null {
  if (minBidDph === null) return null;
  if (minBidDph * (1 + policy.marginPct / 200) <= priceDph) return null;
  const next = bidFor(minBidDph, policy);
  return next !== null && next > priceDph ? next : null;
}

export function validateBidPolicy(p: BidPolicy): void {
  if (!(p.marginPct >= 0 && p.marginPct <= 1000))
    throw new RangeError(`bid.marginPct must be 0..1000 %, got ${p.marginPct}`);
  if (!(p.maxBidDph >= MIN_BID_DPH && p.maxBidDph <= 128))
    throw new RangeError(`bid.maxBidDph must be ${MIN_BID_DPH}..128 $/h (Vast's range), got ${p.maxBidDph}`);
  if (!(Number.isInteger(p.rebids) && p.rebids >= 0 && p.rebids <= 5))
    throw new RangeError(`bid.rebids must be a whole number 0..5, got ${p.rebids}`);
}

/** Appends to a bounded history, oldest dropped first. */
export function pushBounded<T>(list: readonly T[], item: T, max = BID_HISTORY_MAX): T[] {
  return [...list, item].slice(-max);
}

export const emptyBidHistory = (): BidHistory => ({ bids: [], prices: [] });

/** An instance's state fields as the watch and the kill path read them. */
export interface MarketState {
  actualStatus: string | null;
  intendedStatus: string | null;
  curState: string | null;
  nextState: string | null;
  minBidDph: number | null;
  statusMsg: string | null;
}

/**
 * Why Vast is not running an interruptible instance, or null. A bid under `min_bid` (at create, or when
 * the market rises past it) leaves the instance stopped, not destroyed: `actual_status` stopped
 * (vast-api.md §1.9), or `cur_state == intended_status == next_state == "stopped"`, the pattern dstack
 * fails fast on (PR #4037).
 */
export function stoppedByMarket(s: MarketState, bidDph: number | null): string | null {
  const stopped =
    s.actualStatus === 'stopped' ||
    s.curState === 'stopped' ||
    (s.intendedStatus === 'stopped' && s.nextState === 'stopped');
  if (!stopped) return null;
  const market =
    s.minBidDph !== null && bidDph !== null
      ? `min_bid $${s.minBidDph}/h ${s.minBidDph > bidDph ? '>' : '<='} our bid $${bidDph}/h`
      : `min_bid ${s.minBidDph === null ? 'unknown' : `$${s.minBidDph}/h`}`;
  return `Vast stopped the interruptible instance (${market}; actual_status ${s.actualStatus ?? 'null'}, intended_status ${s.intendedStatus ?? 'null'}, cur_state ${s.curState ?? 'null'}, next_state ${s.nextState ?? 'null'}, status_msg ${JSON.stringify(s.statusMsg)})`;
}
