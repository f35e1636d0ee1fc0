/*
 * How lifecycle cost is written in the UI text (summaries, details, kill message). The figure itself is
 * the lifecycle's ledger (workflows/domain/policy/cost.ts via workflows/lifecycle/cost.ts), in real units.
 */

/** "$4.10", or "$0.0123" under a dollar, so a short rental's cost is not shown as $0.00. */
export function fmtCostUsd(usd: number): string {
  return usd < 1 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}
