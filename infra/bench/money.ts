import { compressedLifecycle, startSimStack } from '../dev/sim-stack.js';
import { clockOf } from '../../workflows/domain/policy/clock.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { CONTROL_TASK_QUEUE } from '../../workflows/domain/task-queues.js';
import { farmBooter, spawnHostFarm } from '../sim/farm/client.js';
import { type SimOffer, SimOfferSchema } from '../sim/scenario.js';
import { log, releaseAll, round, type Verdict, waitForVerdicts } from './common.js';
import { DEFAULT_MIN_RATE } from '../../workflows/domain/policy/defaults.js';

/**
 * Money: the seeded fleet under the seeds' original policy (one 45-min benchmark timer, the full
 * 12-proof batch, no early stop) and under ours (early stop), side by side in one run so both see
 * the same machine load: GPU-dollars on bad hosts, per promoted host, and time to kill.
 */
const MIN_RATE = DEFAULT_MIN_RATE;
const POLICIES = [
  { name: 'baseline', earlyStopAfterProofs: 0, idOffset: 0 },
  { name: 'early-stop', earlyStopAfterProofs: 3, idOffset: 500_000_000 },
] as const;

export async function moneyBench(catalogue: SimOffer[], timeScale: number) {
  process.env.SIM_TIME_SCALE = String(timeScale);
  // Each policy rents its own copy of every machine (same hardware and faults, distinct ids).
  const runs = POLICIES.flatMap((p) =>
    catalogue.map((o) => ({
      policy: p,
      base: o,
      offer: SimOfferSchema.parse({ ...o, id: o.id + p.idOffset, machine_id: o.machine_id + p.idOffset }),
    })),
  );
  const farm = await spawnHostFarm({ SIM_TIME_SCALE: String(timeScale) });
  const stack = await startSimStack(
    runs.map((r) => r.offer),
    { headless: true },
    log,
    { bootHost: farmBooter([farm.url]) },
  );
  const tag = `money-${Date.now().toString(36)}`;
  const idOf = (r: (typeof runs)[number]) => `${tag}-${r.policy.name}-${r.base.id}`;
  try {
    const t0 = Date.now();
    await Promise.all(
      runs.map((r) =>
        stack.client.workflow.start(instanceLifecycle, {
          taskQueue: CONTROL_TASK_QUEUE,
          workflowId: idOf(r),
          args: [
            {
              offerId: r.offer.id,
              minRate: MIN_RATE,
              earlyStopAfterProofs: r.policy.earlyStopAfterProofs,
              ...compressedLifecycle(timeScale),
              clock: clockOf(timeScale),
            },
          ],
        }),
      ),
    );
    const verdicts = new Map<string, Verdict>();
    await waitForVerdicts(stack.pool, tag, runs.length, t0 + (4 * 3600 * timeScale + 300) * 1000, verdicts);
    log(`money: ${verdicts.size}/${runs.length} decided in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    // Billed GPU time: running -> destroyed, or -> the verdict for a promoted host (it is paid from then on).
    const spent = runs.map((r) => {
      const v = verdicts.get(idOf(r));
      const inst = stack.vast.ledger().find((i) => i.offerId === r.offer.id);
      const promoted = v?.outcome === 'promoted';
      const end = promoted ? v.at.getTime() : (inst?.destroyedAt ?? Date.now());
      const hours = inst?.runningAt ? (end - inst.runningAt) / 3_600_000 / timeScale : 0;
      return {
        ...r,
        verdict: v ? (v.failure_type ?? v.outcome) : 'undecided',
        promoted,
        hours,
        // The price Vast bills the instance (storage for the rented disk included), not the search's.
        dollars: hours * (inst?.dph ?? r.offer.dph_total),
      };
    });
    const leftRunning = await releaseAll(stack, runs.map(idOf), 120_000);

    const of = (policy: string) => spent.filter((s) => s.policy.name === policy);
    const base = of('baseline');
    const ours = of('early-stop');
    const healthy = new Set(base.filter((s) => s.promoted).map((s) => s.base.id));
    const bad$ = (rows: typeof spent) => rows.filter((s) => !healthy.has(s.base.id)).reduce((a, s) => a + s.dollars, 0);
    const perPromoted = (rows: typeof spent) =>
      rows.reduce((a, s) => a + s.dollars, 0) / Math.max(1, rows.filter((s) => s.promoted).length);
    const saving = bad$(base) > 0 ? 1 - bad$(ours) / bad$(base) : 0;
    return {
      timeScale,
      perHost: base.map((b) => {
        const o = ours.find((x) => x.base.id === b.base.id)!;
        return {
          host: `${b.base.num_gpus}x ${b.base.gpu_name} (${b.base.id})`,
          healthy: healthy.has(b.base.id),
          'baseline verdict': b.verdict,
          'baseline min': Math.round(b.hours * 60),
          'baseline $': round(b.dollars, 3),
          'early-stop verdict': o.verdict,
          'early-stop min': Math.round(o.hours * 60),
          'early-stop $': round(o.dollars, 3),
        };
      }),
      badHostDollars: { baseline: round(bad$(base), 3), earlyStop: round(bad$(ours), 3) },
      dollarsPerPromoted: { baseline: round(perPromoted(base), 3), earlyStop: round(perPromoted(ours), 3) },
      savingOnBadHosts: round(saving, 3),
      wronglyKilledHealthy: ours.filter((s) => healthy.has(s.base.id) && !s.promoted).map((s) => s.base.id),
      undecided: spent.filter((s) => s.verdict === 'undecided').length,
      leftRunning,
    };
  } finally {
    await stack.close();
    await farm.stop();
  }
}
