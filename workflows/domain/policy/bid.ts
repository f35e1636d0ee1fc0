import { z } from 'zod';
import type { BidHistory, BidPolicy } from '../types.js';

/** Vast's create and change-bid accept a `price` from $0.001/h (vast-api.md §1.4; the change-bid OpenAPI page). */
export const MIN_BID_DPH = 0.001;
/** The most create accepts as `price` ($/h for the machine, vast-api.md §1.4). */
export const MAX_CREATE_BID_DPH = 128;
/**
 * The most change-bid accepts, per GPU of the instance: `price <= 32.0 * number of GPUs` (vast-ai/docs
 * api-reference/openapi/yaml/change_bid.yaml @ c624622, x-input-validation; above it a 400 invalid_args).
 */
export const CHANGE_BID_MAX_DPH_PER_GPU = 32;
/** The most events of each kind a rental carries as evidence: enough to show a market's move, small in history. */
export const BID_HISTORY_MAX = 20;

/**
 * A bid policy's range. `maxBidDph` is the policy's cap for the machine; whatever it says, a bid placed
 * is also never above what change-bid accepts for the offer (`CHANGE_BID_MAX_DPH_PER_GPU` × its GPUs,
 * `bidCapDph`), so a rental's bid can always be raised to its cap without a refusal.
 */
export const BidPolicySchema = z.object({
  marginPct: z.number().min(0).max(1000),
  maxBidDph: z
    .number()
    .min(MIN_BID_DPH)
    .max(MAX_CREATE_BID_DPH)
    .describe(
      `$/h, ${MIN_BID_DPH}..${MAX_CREATE_BID_DPH} (Vast's create range); bids are also capped at ${CHANGE_BID_MAX_DPH_PER_GPU} $/h per GPU (change-bid's range)`,
    ),
  rebids: z.number().int().min(0).max(5),
});

/** The highest bid for an offer of `numGpus` GPUs: the policy's cap, never above what change-bid accepts. */
export function bidCapDph(policy: BidPolicy, numGpus: number): number {
  return Math.min(policy.maxBidDph, CHANGE_BID_MAX_DPH_PER_GPU * Math.max(1, Math.floor(numGpus)));
}

/**
 * The bid to place for a `min_bid`: the margin above it, rounded up to a tenth of a cent so it is never
 * under min_bid × (1 + margin). Null when that bid would pass the cap (`bidCapDph`): then we do not bid.
 */
export function bidFor(minBidDph: number, policy: BidPolicy, numGpus: number): number | null {
  const raw = Math.max(MIN_BID_DPH, minBidDph * (1 + policy.marginPct / 100));
  const price = Math.ceil(raw * 1000 - 1e-6) / 1000;
  return price <= bidCapDph(policy, numGpus) + 1e-9 ? price : null;
}

/**
 * Whether a rental bidding `priceDph` should raise its bid now: `min_bid` has come within half the
 * margin of it (one more step of the market and Vast stops the instance), and the new bid fits the cap.
 * Returns the new bid, or null to leave it.
 */
export function raiseTo(priceDph: number, minBidDph: number | null, policy: BidPolicy, numGpus: number): number | null {
  if (minBidDph === null) return null;
  if (minBidDph * (1 + policy.marginPct / 200) <= priceDph) return null;
  const next = bidFor(minBidDph, policy, numGpus);
  return next !== null && next > priceDph ? next : null;
}

/** Validates a bid policy; a bad one is a RangeError naming the field and its range. */
export function validateBidPolicy(p: BidPolicy): void {
  const r = BidPolicySchema.safeParse(p);
  if (r.success) return;
  const i = r.error.issues[0];
  const field = String(i?.path[0] ?? 'bid');
  const range: Record<string, string> = {
    marginPct: '0..1000 %',
    maxBidDph: `${MIN_BID_DPH}..${MAX_CREATE_BID_DPH} $/h (Vast's create range; bids are also capped at ${CHANGE_BID_MAX_DPH_PER_GPU} $/h per GPU, change-bid's)`,
    rebids: 'a whole number 0..5',
  };
  const got = (p as unknown as Record<string, unknown>)[field];
  throw new RangeError(`bid.${field} must be ${range[field] ?? 'valid'}, got ${String(got)}`);
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
