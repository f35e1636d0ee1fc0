import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { expect } from 'vitest';
import { instanceLifecycle } from '../../workflows/index.js';
import type { LifecycleRequest } from '../../workflows/domain/types.js';
import type { FleetEnv } from './fleet-env.js';

export interface Killed {
  workflowId: string;
  failure: ApplicationFailure;
  details: Record<string, unknown>;
}

/** Runs a lifecycle that must end killed with `type`; returns its failure for further assertions. */
export async function expectKilled(
  env: FleetEnv,
  workflowId: string,
  req: LifecycleRequest | 'already-started',
  type: string,
): Promise<Killed> {
  const run =
    req === 'already-started'
      ? env.client.workflow.getHandle<typeof instanceLifecycle>(workflowId).result()
      : env.client.workflow.execute(instanceLifecycle, {
          taskQueue: env.taskQueue,
          workflowId,
          args: [req],
          workflowExecutionTimeout: '4 minutes',
        });
  const err = await run.then(
    (r) => new Error(`expected ${type}, but the lifecycle ended ${r.outcome}`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const failure = (err as WorkflowFailedError).cause;
  expect(failure).toBeInstanceOf(ApplicationFailure);
  const app = failure as ApplicationFailure;
  expect(app.type, app.message).toBe(type);
  const desc = await env.client.workflow.getHandle(workflowId).describe();
  expect(desc.searchAttributes.FailureType).toEqual([type]);
  expect(desc.searchAttributes.Outcome).toEqual(['killed']);
  const row = await env.pool.query('SELECT outcome, failure_type, reason FROM instances WHERE workflow_id = $1', [
    workflowId,
  ]);
  expect(row.rows[0]).toMatchObject({ outcome: 'killed', failure_type: type });
  return { workflowId, failure: app, details: (app.details?.[0] ?? {}) as Record<string, unknown> };
}

/** No instance of this offer is left running, and its simulated host processes are gone. */
export function expectCleanedUp(env: FleetEnv, offerId: number, rented = true): void {
  const rows = env.sim.ledger().filter((r) => r.offerId === offerId);
  expect(rows.length).toBe(rented ? 1 : 0);
  for (const r of rows) {
    expect(r.destroyed, `instance ${r.id} destroyed`).toBe(true);
    expect(r.hostAlive, `host of instance ${r.id} stopped`).toBe(false);
  }
}
