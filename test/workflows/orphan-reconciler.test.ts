import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForVerdict } from '../../workers/cli/verdict.js';
import { instanceLifecycle, orphanReconciler } from '../../workflows/index.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { cancelAndWait } from '../helpers/cancel-and-wait.js';
import { simOffer } from '../helpers/offers.js';

const orphaned = simOffer({ host: { proofSec: 100 } });
const owned = simOffer({ host: { proofSec: 100 } });

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv([orphaned, owned]);
});
afterAll(async () => env?.close());

describe('orphan reconciliation', () => {
  it('destroys an instance whose lifecycle was terminated, and leaves owned ones alone', async () => {
    const req = fastRequest(orphaned.id, { minRate: 29 / 0.01 });
    const victim = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: `orphan-${orphaned.id}`,
      args: [req],
    });
    const keeper = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: `owned-${owned.id}`,
      args: [fastRequest(owned.id, { minRate: 29 / 0.01 })],
    });
    expect(await waitForVerdict(env.client, victim.workflowId)).toBe('promoted');
    expect(await waitForVerdict(env.client, keeper.workflowId)).toBe('promoted');
    // Terminate runs no cleanup: the instance keeps billing with nobody watching it.
    await victim.terminate('simulating an operator mistake');
    expect(env.sim.ledger().find((l) => l.offerId === orphaned.id)?.destroyed).toBe(false);

    const result = await env.client.workflow.execute(orphanReconciler, {
      taskQueue: env.taskQueue,
      workflowId: `reconcile-${orphaned.id}`,
      args: [],
    });
    expect(result.destroyed.map((d) => d.workflowId)).toContain(victim.workflowId);
    expect(result.destroyed.map((d) => d.workflowId)).not.toContain(keeper.workflowId);
    const victimRow = env.sim.ledger().find((l) => l.offerId === orphaned.id);
    expect(victimRow).toMatchObject({ destroyed: true, hostAlive: false });
    expect(env.sim.ledger().find((l) => l.offerId === owned.id)?.destroyed).toBe(false);
    const row = await env.pool.query('SELECT destroyed_at, outcome FROM instances WHERE workflow_id = $1', [
      victim.workflowId,
    ]);
    expect(row.rows[0]?.destroyed_at).not.toBeNull();
    expect(row.rows[0]?.outcome).toBe('promoted');
    await cancelAndWait(env.client, keeper.workflowId);
  });
});
