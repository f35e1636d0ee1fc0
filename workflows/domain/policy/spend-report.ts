import { REAL_TIME } from './clock.js';
import { costAt, type CostLedger, openLedger, promoted } from './cost.js';

/** One rental as the store keeps it (infra/sql/004_cost.sql); times are ISO strings, in real time. */
export interface SpendRow {
  gpuName: string | null;
  outcome: 'promoted' | 'killed' | null;
  failureType: string | null;
  createdAt: string;
  dph: number | null;
  rentedAt: string | null;
  verdictAt: string | null;
  destroyedAt: string | null;
  costUsd: number | null;
  beforeVerdictUsd: number | null;
  productionUsd: number | null;
  productionSec: number | null;
  /** The benchmark's rate, real proofs/h. */
  benchRate: number | null;
  /**
   * Set once the price of the rental moved (infra/sql/007_price_moves.sql): the two cost sums are counted
   * up to this time, `dph` is billed from it on. Absent or null: `dph` counts from the rent.
   */
  costCountedAt?: string | null;
}

export const REPORT_BY = ['gpu', 'failure', 'day'] as const;
export type ReportBy = (typeof REPORT_BY)[number];

/** Fleet figures in real units: $ are GPU-$ at the billed price, rates real proofs per hour. */
export interface SpendFigures {
  rentals: number;
  /** Rentals whose last outcome is promoted (still proving); each rental counts once. */
  promoted: number;
  /** Rentals whose last outcome is killed, a promoted one its watch killed later included. */
  killed: number;
  spentUsd: number;
  beforeVerdictUsd: number;
  productionUsd: number;
  /** GPU-$ on rentals killed before a promotion: they never proved for us. */
  wasteUsd: number;
  /** $/h the still-rented instances bill now. */
  spendNowDph: number;
  /** What the promoted, still-rented instances prove (their benchmark rates), proofs/h. */
  deliveringProofsPerHour: number;
  /** Proofs delivered in production: each promoted rental's rate times its production time. */
  proofsDelivered: number;
  /** All GPU-$ (waste and verdicts included) per delivered proof; null before any. */
  dollarsPerDeliveredProof: number | null;
}

export interface SpendReport {
  since: string;
  asOf: string;
  by: ReportBy | null;
  total: SpendFigures;
  groups: Array<{ key: string } & SpendFigures>;
}

interface RowCost {
  open: boolean;
  total: number;
  before: number;
  production: number;
  productionSec: number;
}

/**
 * A rental's cost: as the lifecycle recorded it when it ended; counted on to `nowMs` while it is rented;
 * and for one that ended without its lifecycle counting it (terminated, its instance destroyed by the
 * reconciler), its price over its row's rented span.
 */
export function rowCost(r: SpendRow, nowMs: number): RowCost {
  const open = r.destroyedAt === null && r.outcome !== 'killed' && r.dph !== null && r.rentedAt !== null;
  if (!open && r.costUsd !== null) {
    return {
      open,
      total: r.costUsd,
      before: r.beforeVerdictUsd ?? 0,
      production: r.productionUsd ?? 0,
      productionSec: r.productionSec ?? 0,
    };
  }
  if (r.dph === null || r.rentedAt === null) return { open, total: 0, before: 0, production: 0, productionSec: 0 };
  const endMs = open || r.destroyedAt === null ? nowMs : Date.parse(r.destroyedAt);
  const c = costAt(openRowLedger(r, r.dph, r.rentedAt), endMs);
  return {
    open,
    total: c.totalUsd,
    before: c.beforeVerdictUsd,
    production: c.productionUsd,
    productionSec: c.productionSec,
  };
}

/** An open rental's ledger: from the rent at `dph`, or from its last price move at the price it moved to. */
function openRowLedger(r: SpendRow, dph: number, rentedAt: string): CostLedger {
  const l = openLedger(dph, Date.parse(rentedAt), REAL_TIME);
  const verdictMs = r.verdictAt === null ? null : Date.parse(r.verdictAt);
  if (!r.costCountedAt) return verdictMs === null ? l : promoted(l, verdictMs);
  return {
    ...l,
    verdictAtMs: verdictMs,
    countedToMs: Date.parse(r.costCountedAt),
    beforeVerdictUsd: r.beforeVerdictUsd ?? 0,
    productionUsd: r.productionUsd ?? 0,
  };
}

export function spendFigures(rows: readonly SpendRow[], nowMs: number): SpendFigures {
  const f: SpendFigures = {
    rentals: rows.length,
    promoted: 0,
    killed: 0,
    spentUsd: 0,
    beforeVerdictUsd: 0,
    productionUsd: 0,
    wasteUsd: 0,
    spendNowDph: 0,
    deliveringProofsPerHour: 0,
    proofsDelivered: 0,
    dollarsPerDeliveredProof: null,
  };
  for (const r of rows) {
    const c = rowCost(r, nowMs);
    const everPromoted = r.verdictAt !== null || r.outcome === 'promoted';
    // Each rental once, by its last outcome: promoted and later killed by its watch is killed.
    if (r.outcome === 'killed') f.killed++;
    else if (everPromoted) f.promoted++;
    f.spentUsd += c.total;
    f.beforeVerdictUsd += c.before;
    f.productionUsd += c.production;
    if (r.outcome === 'killed' && !everPromoted) f.wasteUsd += c.total;
    if (c.open) f.spendNowDph += r.dph ?? 0;
    if (c.open && r.outcome === 'promoted') f.deliveringProofsPerHour += r.benchRate ?? 0;
    if (everPromoted) f.proofsDelivered += ((r.benchRate ?? 0) * c.productionSec) / 3600;
  }
  return {
    ...f,
    spentUsd: round6(f.spentUsd),
    beforeVerdictUsd: round6(f.beforeVerdictUsd),
    productionUsd: round6(f.productionUsd),
    wasteUsd: round6(f.wasteUsd),
    spendNowDph: round6(f.spendNowDph),
    deliveringProofsPerHour: Math.round(f.deliveringProofsPerHour * 100) / 100,
    proofsDelivered: Math.round(f.proofsDelivered * 100) / 100,
    dollarsPerDeliveredProof: f.proofsDelivered > 0 ? round6(f.spentUsd / f.proofsDelivered) : null,
  };
}

export function groupKey(r: SpendRow, by: ReportBy): string {
  if (by === 'gpu') return r.gpuName ?? '(not rented)';
  if (by === 'day') return r.createdAt.slice(0, 10);
  if (r.outcome === 'killed') return r.failureType ?? '(unknown)';
  return r.outcome === 'promoted' ? '(promoted, running)' : '(no verdict yet)';
}

/** The fleet's figures over rentals started since `since`, in total and grouped. */
export function spendReport(rows: readonly SpendRow[], nowMs: number, since: string, by: ReportBy | null): SpendReport {
  const groups = new Map<string, SpendRow[]>();
  if (by) for (const r of rows) groups.set(groupKey(r, by), [...(groups.get(groupKey(r, by)) ?? []), r]);
  return {
    since,
    asOf: new Date(nowMs).toISOString(),
    by,
    total: spendFigures(rows, nowMs),
    groups: [...groups.entries()]
      .map(([key, rs]) => ({ key, ...spendFigures(rs, nowMs) }))
      .sort((a, b) =>
        by === 'day' ? a.key.localeCompare(b.key) : b.spentUsd - a.spentUsd || a.key.localeCompare(b.key),
      ),
  };
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
