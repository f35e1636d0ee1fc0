import { waitForVerdict } from '../../workers/cli/verdict.js';
import { compressedLifecycle, type SimStack, startSimStack } from '../../workers/sim-stack.js';
import { instanceLifecycle } from '../../workflows/index.js';
import type { SimOffer } from '../sim/scenario.js';
import { log, round } from './common.js';

/**
 * Money: the seeded fleet under the seeds' original policy (45-min timer, full 12-proof batch, no early
 * stop) and under ours (early stop): GPU-dollars on bad hosts, per promoted host, and time to kill.
 */
const MIN_RATE = 29;

interface Lifecycle {
  workflowId: string;
  offer: SimOffer;
  verdict: 'promoted' | 'killed';
  failureType: string | null;
  verdictAt: number;
}

async function runFleet(
  stack: SimStack,
  offers: SimOffer[],
  tag: string,
  earlyStopAfterProofs: number,
  scale: number,
): Promise<Lifecycle[]> {
  const started = Date.now();
  const ids = offers.map((o) => `${tag}-${o.id}`);
  await Promise.all(
    offers.map((o, i) =>
      stack.client.workflow.start(instanceLifecycle, {
        taskQueue: 'gpu-fleet-control',
        workflowId: ids[i]!,
        args: [{ offerId: o.id, minRate: MIN_RATE / scale, earlyStopAfterProofs, ...compressedLifecycle(scale) }],
      }),
    ),
  );
  const out = await Promise.all(
    offers.map(async (offer, i) => {
      const workflowId = ids[i]!;
      const v = await waitForVerdict(stack.client, workflowId, 900_000);
      const verdictAt = Date.now();
      const row = await stack.pool.query<{ failure_type: string | null }>(
        'SELECT failure_type FROM instances WHERE workflow_id = $1',
        [workflowId],
      );
      return {
        workflowId,
        offer,
        verdict: v === 'promoted' ? 'promoted' : 'killed',
        failureType: row.rows[0]?.failure_type ?? null,
        verdictAt,
      } as Lifecycle;
    }),
  );
  log(`${tag}: ${out.length} lifecycles decided in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return out;
}

/** GPU time billed per instance (running -> destroyed, or -> verdict while still promoted), in real-world hours. */
function spend(stack: SimStack, l: Lifecycle, scale: number): { hours: number; dollars: number } {
  const inst = stack.vast.ledger().find((r) => r.offerId === l.offer.id && r.label.includes(l.workflowId));
  if (!inst?.runningAt) return { hours: 0, dollars: 0 };
  const end = l.verdict === 'promoted' ? l.verdictAt : (inst.destroyedAt ?? l.verdictAt);
  const hours = (end - inst.runningAt) / 3_600_000 / scale;
  return { hours, dollars: hours * inst.dph };
}

export async function moneyBench(offers: SimOffer[], scale: number) {
  const results: Record<string, Array<Lifecycle & { hours: number; dollars: number }>> = {};
  for (const [policy, earlyStop] of [
    ['baseline', 0],
    ['early-stop', 3],
  ] as const) {
    const stack = await startSimStack(offers, { headless: true }, log);
    try {
      const decided = await runFleet(stack, offers, policy, earlyStop, scale);
      results[policy] = decided.map((l) => ({ ...l, ...spend(stack, l, scale) }));
    } finally {
      await stack.close();
    }
  }
  const base = results.baseline!;
  const ours = results['early-stop']!;
  const healthy = new Set(base.filter((l) => l.verdict === 'promoted').map((l) => l.offer.id));
  const bad$ = (rows: typeof base) => rows.filter((l) => !healthy.has(l.offer.id)).reduce((s, l) => s + l.dollars, 0);
  const perPromoted = (rows: typeof base) =>
    rows.reduce((s, l) => s + l.dollars, 0) / Math.max(1, rows.filter((l) => l.verdict === 'promoted').length);
  const wronglyKilled = ours.filter((l) => healthy.has(l.offer.id) && l.verdict !== 'promoted').map((l) => l.offer.id);
  const saving = bad$(base) > 0 ? 1 - bad$(ours) / bad$(base) : 0;
  return {
    perHost: base.map((b) => {
      const o = ours.find((x) => x.offer.id === b.offer.id)!;
      return {
        host: `${b.offer.num_gpus}x ${b.offer.gpu_name} (${b.offer.id})`,
        healthy: healthy.has(b.offer.id),
        'baseline verdict': b.failureType ?? b.verdict,
        'baseline min': Math.round(b.hours * 60),
        'baseline $': round(b.dollars, 3),
        'early-stop verdict': o.failureType ?? o.verdict,
        'early-stop min': Math.round(o.hours * 60),
        'early-stop $': round(o.dollars, 3),
      };
    }),
    badHostDollars: { baseline: round(bad$(base), 3), earlyStop: round(bad$(ours), 3) },
    dollarsPerPromoted: { baseline: round(perPromoted(base), 3), earlyStop: round(perPromoted(ours), 3) },
    savingOnBadHosts: round(saving, 3),
    wronglyKilledHealthy: wronglyKilled,
  };
}
