import { type SimOffer } from '../scenario.js';
import { simDphBase } from './pricing.js';

/**
 * The interruptible market of the simulated Vast: each offer's `min_bid` ($/h) moves on the simulator's
 * clock by its scenario (`sim.market.minBidPath`, seconds since the simulator started, compressed by
 * SIM_TIME_SCALE like every other scenario time), or when a test or the bench sets it. Without a
 * scenario it is 60 % of the offer's compute price, the ratio in the reference's instance sample
 * (min_bid 0.296 at dph_base 0.8 is 37 %; the offer capture's 0.2 at 0.247 is 81 %: 60 % sits between).
 */
export class BidMarket {
  private readonly overrides = new Map<number, number>();

  constructor(
    private readonly startedAt: number,
    private readonly scale: number,
  ) {}

  minBid(o: SimOffer, now = Date.now()): number {
    const set = this.overrides.get(o.id);
    if (set !== undefined) return set;
    const path = o.sim.market.minBidPath;
    // Before the simulator started (a lagging listing looking back past it) the path has not begun.
    const elapsedSec = (now - this.startedAt) / 1000 / this.scale;
    let value = o.sim.market.minBid ?? Math.round(simDphBase(o) * 0.6 * 1000) / 1000;
    for (const p of path) if (p.atSec <= elapsedSec) value = p.minBid;
    return value;
  }

  set(offerId: number, minBid: number): void {
    this.overrides.set(offerId, minBid);
  }
}

/** Vast's accepted bid range (`price` on create: 0.001-128 $/h, vast-api.md §1.4). */
export function invalidBid(price: unknown, max = 128): string | null {
  if (price === undefined || price === null) return null;
  if (typeof price !== 'number' || !Number.isFinite(price) || price < 0.001 || price > max)
    return `price must be a number from 0.001 to ${max} ($/h)`;
  return null;
}
