import { SA } from '../domain/search-attributes.js';
import type { Clock } from '../domain/policy/clock.js';
import { costAt, type CostFigures, type CostLedger, openLedger, promoted, repriced } from '../domain/policy/cost.js';

/**
 * A lifecycle's cost keeper: the narrow hooks the runbook calls (rented, promoted, repriced, destroyed)
 * around the pure ledger (policy/cost.ts). Times are the workflow's clock (Date.now() in a workflow is
 * deterministic), so replay counts the same dollars.
 */
export function costKeeper(clock: Clock, carried?: CostLedger) {
  let ledger: CostLedger | null = carried ?? null;
  /** Billing stops at the destroy, so the cost stops counting there. */
  let destroyedAtMs: number | null = null;
  const now = (): CostFigures | null => (ledger ? costAt(ledger, destroyedAtMs ?? Date.now()) : null);
  return {
    now,
    ledger: () => ledger,
    rented(dph: number, atMs = Date.now()): void {
      ledger = openLedger(dph, atMs, clock);
    },
    /** The verdict: production from here on. Returns the cost of finding out. */
    promoted(): CostFigures | null {
      if (ledger) ledger = promoted(ledger, Date.now());
      return now();
    },
    repriced(dph: number): void {
      if (ledger && dph > 0) ledger = repriced(ledger, dph, Date.now());
    },
    destroyed(): void {
      destroyedAtMs = Date.now();
    },
    /** For a store write: `{ cost }` once rented, else nothing. */
    field(): { cost?: CostFigures } {
      const c = now();
      return c ? { cost: c } : {};
    },
    /** CostUsd, to ride an upsert the lifecycle makes anyway (so it adds no command to history). */
    attribute() {
      const c = now();
      return c ? [{ key: SA.costUsd, value: Math.round(c.totalUsd * 10_000) / 10_000 }] : [];
    },
  };
}
