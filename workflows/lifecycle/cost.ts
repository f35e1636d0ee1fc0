import { SA } from '../domain/search-attributes.js';
import type { Clock } from '../domain/policy/clock.js';
import {
  costAt,
  type CostFigures,
  type CostLedger,
  destroyed,
  openLedger,
  promoted,
  repriced,
} from '../domain/policy/cost.js';

/**
 * A lifecycle's cost keeper: the narrow hooks the runbook calls (rented, promoted, repriced, destroyed)
 * around the pure ledger (policy/cost.ts). Times are the workflow's clock (Date.now() in a workflow is
 * deterministic), so replay counts the same dollars.
 */
export function costKeeper(clock: Clock, carried?: CostLedger) {
  let ledger: CostLedger | null = carried ?? null;
  const now = (): CostFigures | null => (ledger ? costAt(ledger, Date.now()) : null);
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
    /** Billing stops at the destroy: the ledger closes there for every reader (status, store, report). */
    destroyed(): void {
      if (ledger) ledger = destroyed(ledger, Date.now());
    },
    /** For a store write: `{ cost }` once rented, else nothing. */
    field(): { cost?: CostFigures } {
      const c = now();
      return c ? { cost: c } : {};
    },
    /**
     * CostUsd and when it was counted, to ride an upsert the lifecycle makes anyway (so it adds no command
     * to history); a closed ledger is counted to its destroy.
     */
    attribute() {
      const c = now();
      if (!c || !ledger) return [];
      const at = ledger.destroyedAtMs ?? Date.now();
      return [
        { key: SA.costUsd, value: Math.round(c.totalUsd * 1e6) / 1e6 },
        { key: SA.costCountedAt, value: new Date(at) },
      ];
    },
  };
}
