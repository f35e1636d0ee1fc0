import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { lifecycleStatusQuery } from '../../workflows/definitions.js';
import { SA } from '../../workflows/domain/search-attributes.js';
import { pollUntil } from './poll.js';

/**
 * Waits until a lifecycle has a verdict: promoted (it keeps running, watching the host) or closed.
 * Fails after `timeoutMs` so a stuck lifecycle fails the test instead of hanging it.
 */
export async function waitForVerdict(
  client: Client,
  workflowId: string,
  timeoutMs = 180_000,
): Promise<'promoted' | 'closed'> {
  const handle = client.workflow.getHandle(workflowId);
  // describe() failing ends the wait (as a stopping demo closes the connection); a query may fail mid-task.
  return pollUntil(
    `a verdict of ${workflowId}`,
    async () => {
      const desc = await handle.describe();
      if (desc.status.name !== 'RUNNING') return 'closed' as const;
      const status = await handle.query(lifecycleStatusQuery).catch(() => null);
      return status?.stage === 'promoted' ? ('promoted' as const) : undefined;
    },
    { timeoutMs, intervalMs: 250, isFatal: () => true },
  );
}

/** A lifecycle's latest rental as the store recorded its verdict, with the Outcome attribute beside it. */
export interface RecordedOutcome {
  rentalKey: string;
  outcome: string;
  verdict: string | null;
  reason: string | null;
  benchRate: number | null;
  outcomeAttribute: string;
}

/**
 * After waitForVerdict says promoted: waits until the promotion is recorded, in the store (the latest
 * rental's row of this workflow id has its outcome) and in visibility (the Outcome search attribute).
 * The status query turns promoted first; the stage event, the row (a local activity) and the attribute
 * (upserted in the workflow task that completes after that local activity) follow in that order, so
 * neither "stage promoted" nor "row written" implies the attribute. Returns what was recorded, which the
 * caller asserts on (a lifecycle killed right after its verdict returns 'killed', not a timeout).
 */
export async function waitForPromotionRecorded(
  client: Client,
  pool: Pick<pg.Pool, 'query'>,
  workflowId: string,
  timeoutMs = 30_000,
): Promise<RecordedOutcome> {
  const handle = client.workflow.getHandle(workflowId);
  return pollUntil(
    `the verdict of ${workflowId} recorded (row outcome and Outcome attribute)`,
    async () => {
      // A workflow id may have rented its offer several times: its latest rental is this run's.
      const res = await pool.query<{
        rental_key: string;
        outcome: string | null;
        verdict: string | null;
        reason: string | null;
        bench_rate: number | null;
      }>(
        `SELECT rental_key, outcome, verdict, reason, bench_rate FROM instances
         WHERE workflow_id = $1 ORDER BY created_at DESC LIMIT 1`,
        [workflowId],
      );
      const row = res.rows[0];
      if (!row?.outcome) return undefined;
      const attribute = (await handle.describe()).typedSearchAttributes.get(SA.outcome);
      if (!attribute) return undefined;
      return {
        rentalKey: row.rental_key,
        outcome: row.outcome,
        verdict: row.verdict,
        reason: row.reason,
        benchRate: row.bench_rate,
        outcomeAttribute: attribute,
      };
    },
    { timeoutMs, intervalMs: 200 },
  );
}
