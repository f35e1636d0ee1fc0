import { type Clock, formatDuration, realMs } from './clock.js';

export { formatDuration };

/**
 * What a rental has cost so far, kept from workflow time (deterministic) at the price Vast bills. JSON-safe:
 * it rides in continue-as-new, so a promoted host's cost keeps counting across runs.
 */
export interface CostLedger {
  /** $/h Vast bills this instance (its dph_total read after renting, storage included). */
  dph: number;
  /** The lifecycle's clock, which the times below are on (policy/clock.ts). */
  clock: Clock;
  /** Workflow epoch ms of the rent. */
  rentedAtMs: number;
  /** Workflow epoch ms of the promotion; null before a verdict (and for a host killed before one). */
  verdictAtMs: number | null;
  /** Workflow epoch ms up to which the two sums below are counted. */
  countedToMs: number;
  /** Workflow epoch ms of the destroy: billing stops there, so every reader's count stops there too. */
  destroyedAtMs: number | null;
  beforeVerdictUsd: number;
  productionUsd: number;
}

/** A rental's cost in real units; what the status query, failures and the store carry. */
export interface CostFigures {
  /** GPU-$ from rent to destroy (or to now while it runs). */
  totalUsd: number;
  /** GPU-$ from rent to the verdict (the price of finding out). */
  beforeVerdictUsd: number;
  /** GPU-$ since promotion (the price of proving). */
  productionUsd: number;
  /** Real seconds rented. */
  rentedSec: number;
  /** Real seconds since promotion (0 before a verdict). */
  productionSec: number;
  dph: number;
}

export function openLedger(dph: number, atMs: number, clock: Clock): CostLedger {
  return {
    dph,
    clock,
    rentedAtMs: atMs,
    verdictAtMs: null,
    countedToMs: atMs,
    destroyedAtMs: null,
    beforeVerdictUsd: 0,
    productionUsd: 0,
  };
}

/** The ledger counted up to `atMs` (never past the destroy) at its current price. */
function countedTo(l: CostLedger, atMs: number): CostLedger {
  const nowMs = l.destroyedAtMs === null ? atMs : Math.min(atMs, l.destroyedAtMs);
  const spanMs = Math.max(0, nowMs - l.countedToMs);
  const usd = (l.dph * realMs(spanMs, l.clock)) / 3_600_000;
  return l.verdictAtMs === null
    ? { ...l, countedToMs: Math.max(nowMs, l.countedToMs), beforeVerdictUsd: l.beforeVerdictUsd + usd }
    : { ...l, countedToMs: Math.max(nowMs, l.countedToMs), productionUsd: l.productionUsd + usd };
}

/** The verdict: from here on the rental's time is production. */
export function promoted(l: CostLedger, atMs: number): CostLedger {
  return { ...countedTo(l, atMs), verdictAtMs: atMs };
}

/** Vast now bills another price (a watched host's price moved): count up to now at the old one. */
export function repriced(l: CostLedger, dph: number, atMs: number): CostLedger {
  return l.dph === dph ? l : { ...countedTo(l, atMs), dph };
}

/** The instance is destroyed: the ledger is closed, and reads at any later time give this figure. */
export function destroyed(l: CostLedger, atMs: number): CostLedger {
  return l.destroyedAtMs !== null ? l : { ...countedTo(l, atMs), destroyedAtMs: atMs };
}

/** Cost to date: counted to `nowMs`, or to the destroy for a closed ledger. */
export function costAt(l: CostLedger, nowMs: number): CostFigures {
  const c = countedTo(l, nowMs);
  return {
    totalUsd: round6(c.beforeVerdictUsd + c.productionUsd),
    beforeVerdictUsd: round6(c.beforeVerdictUsd),
    productionUsd: round6(c.productionUsd),
    rentedSec: Math.round(realMs(Math.max(0, c.countedToMs - c.rentedAtMs), l.clock) / 1000),
    productionSec:
      c.verdictAtMs === null ? 0 : Math.round(realMs(Math.max(0, c.countedToMs - c.verdictAtMs), l.clock) / 1000),
    dph: l.dph,
  };
}

/** "$0.31": cents for a dollar and more, a tenth of a cent below, so a short rental is not "$0.00". */
export function formatUsd(usd: number): string {
  return usd >= 1 || usd === 0 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(usd >= 0.1 ? 2 : 4)}`;
}

/** The cost clause of a kill's message: "after 47 min, $0.31" (or "nothing rented, $0" before a rent). */
export function formatCost(c: CostFigures | null): string {
  return c === null ? 'nothing rented, $0' : `after ${formatDuration(c.rentedSec)}, ${formatUsd(c.totalUsd)}`;
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
