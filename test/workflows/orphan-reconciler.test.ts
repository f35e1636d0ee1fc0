import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForPromotionRecorded } from '../../infra/dev/verdict.js';
import { expectPromoted } from '../helpers/expect-promoted.js';
import { instanceLifecycle, orphanReconciler } from '../../workflows/index.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { cancelAndWait, cancelStillRunning } from '../helpers/cancel-and-wait.js';
import { simOffer } from '../helpers/offers.js';

const orphaned = simOffer({ host: { proofSec: 100 } });
const owned = simOffer({ host: { proofSec: 100 } });
const next = simOffer({ host: { proofSec: 100 } });

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv([orphaned, owned, next]);
});
afterAll(async () => {
  // Also when the test failed midway: a lifecycle left running would count in later files' scaler caps.
  if (env) await cancelStillRunning(env.client, [`orphan-${orphaned.id}`, `owned-${owned.id}`]);
  await env?.close();
});

describe('orphan reconciliation', () => {
  it('destroys an instance whose lifecycle was terminated, and leaves owned ones alone', async () => {
    const req = fastRequest(orphaned.id, { minRate: 29 });
    const victim = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: `orphan-${orphaned.id}`,
      args: [req],
    });
    const keeper = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: `owned-${owned.id}`,
      args: [fastRequest(owned.id, { minRate: 29 })],
    });
    await expectPromoted(env.client, victim.workflowId);
    await expectPromoted(env.client, keeper.workflowId);
    // Its promotion recorded first: terminated before that, its row would keep no verdict to keep.
    expect((await waitForPromotionRecorded(env.client, env.pool, victim.workflowId)).outcome).toBe('promoted');
    // Terminate runs no cleanup: the instance keeps billing with nobody watching it.
    await victim.terminate('simulating an operator mistake');
    expect(env.sim.ledger().find((l) => l.offerId === orphaned.id)?.destroyed).toBe(false);
    // The same workflow id starts a new rental (of another offer here): it owns its own instance only.
    const successor = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: victim.workflowId,
      args: [fastRequest(next.id, { minRate: 29 })],
    });
    await expectPromoted(env.client, successor.workflowId);
    // Its row is asserted promoted below: the record follows the promoted stage.
    expect((await waitForPromotionRecorded(env.client, env.pool, successor.workflowId)).outcome).toBe('promoted');

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
    expect(env.sim.ledger().find((l) => l.offerId === next.id)?.destroyed).toBe(false);
    expect(result.destroyed).toHaveLength(1);
    const rows = await env.pool.query<{ offer_id: string; destroyed: boolean; outcome: string }>(
      `SELECT offer_id, destroyed_at IS NOT NULL AS destroyed, outcome FROM instances WHERE workflow_id = $1
       ORDER BY created_at`,
      [victim.workflowId],
    );
    // The orphan's rental is recorded destroyed (keeping its verdict); its successor's is untouched.
    expect(rows.rows).toEqual([
      { offer_id: String(orphaned.id), destroyed: true, outcome: 'promoted' },
      { offer_id: String(next.id), destroyed: false, outcome: 'promoted' },
    ]);
    await cancelAndWait(env.client, keeper.workflowId);
    await cancelAndWait(env.client, successor.workflowId);
  });
});
