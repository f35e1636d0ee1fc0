import {
  type CapacityMix,
  DEFAULT_CAPACITY_MIX,
  parseCapacityMix,
} from '../../workflows/domain/policy/capacity-mix.js';
import { CliError } from './context.js';
import { fmtRate } from './format.js';

/** `schedule setup`'s capacity-mix flags, as commander parsed them (each already range-checked). */
export interface CapacityFlags {
  onDemandFloor?: number;
  bidMargin?: number;
  maxBidFraction?: number;
  rebids?: number;
}

/**
 * The scaler's capacity mix from the flags: none without `--on-demand-floor` (on-demand only), else the
 * floor (converted to the workflows' rate units) with the bid flags or their defaults, checked by the
 * same zod schema the scaler applies to its input.
 */
export function capacityFromFlags(o: CapacityFlags, toWorkflowRate: (real: number) => number): CapacityMix | null {
  const bidFlags = o.bidMargin !== undefined || o.maxBidFraction !== undefined || o.rebids !== undefined;
  if (o.onDemandFloor === undefined) {
    if (bidFlags)
      throw new CliError(
        '--bid-margin, --max-bid-fraction and --rebids need --on-demand-floor (the mix is off without it)',
        2,
      );
    return null;
  }
  const parsed = parseCapacityMix({
    onDemandFloorRate: toWorkflowRate(o.onDemandFloor),
    bidMarginPct: o.bidMargin ?? DEFAULT_CAPACITY_MIX.bidMarginPct,
    maxBidFraction: o.maxBidFraction ?? DEFAULT_CAPACITY_MIX.maxBidFraction,
    rebids: o.rebids ?? DEFAULT_CAPACITY_MIX.rebids,
  });
  if (!parsed.ok) throw new CliError(parsed.error, 2);
  return parsed.mix;
}

export function capacityText(
  c: { onDemandFloorProofsPerHour: number; bidMarginPct: number; maxBidFraction: number; rebids: number } | null,
): string {
  if (!c) return 'on-demand only';
  return `on-demand up to ${fmtRate(c.onDemandFloorProofsPerHour)}, interruptible above it: bid min_bid + ${c.bidMarginPct} %, at most ${Math.round(c.maxBidFraction * 100)} % of the on-demand price, ${c.rebids} rebid(s)`;
}
