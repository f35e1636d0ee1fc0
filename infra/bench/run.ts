import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { waitForVerdict } from '../../workers/cli/verdict.js';
import { compressedLifecycle, type SimStack, startSimStack } from '../../workers/sim-stack.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { CatalogueSchema, type SimOffer, SimOfferSchema } from '../sim/scenario.js';

/**
 * `npm run bench`: measures the fleet through the real dev server, Postgres and the simulators.
 *  1. money: the seeded demo fleet under the seeds' original policy (45-min timer, full 12-proof
 *     batch, no early stop) and under ours (early stop), GPU-dollars on bad hosts and time to kill;
 *  2. scale: N concurrent healthy lifecycles: throughput, decision latency, history size, CPU, RSS.
 * `--smoke` runs a small version of both (CI). Results: bench-results/<date>.json and a table.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
process.env.SIM_TIME_SCALE ??= '0.01';
const scale = Number(process.env.SIM_TIME_SCALE);
const smoke = process.argv.includes('--smoke');
const log = (m: string) => console.error(`[bench] ${m}`);
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
function spend(stack: SimStack, l: Lifecycle): { hours: number; dollars: number } {
  const inst = stack.vast.ledger().find((r) => r.offerId === l.offer.id && r.label.includes(l.workflowId));
  if (!inst?.runningAt) return { hours: 0, dollars: 0 };
  const end = l.verdict === 'promoted' ? l.verdictAt : (inst.destroyedAt ?? l.verdictAt);
  const hours = (end - inst.runningAt) / 3_600_000 / scale;
  return { hours, dollars: hours * inst.dph };
}

async function money(offers: SimOffer[]) {
  const results: Record<string, Array<Lifecycle & { hours: number; dollars: number }>> = {};
  for (const [policy, earlyStop] of [
    ['baseline', 0],
    ['early-stop', 3],
  ] as const) {
    const stack = await startSimStack(offers, { headless: true }, log);
    try {
      const decided = await runFleet(stack, offers, policy, earlyStop);
      results[policy] = decided.map((l) => ({ ...l, ...spend(stack, l) }));
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

async function scaleRun(n: number) {
  const offers = Array.from({ length: n }, (_, i) =>
    SimOfferSchema.parse({
      id: 90_000_000 + n * 1000 + i,
      machine_id: 90_000_000 + n * 1000 + i,
      host_id: 1,
      gpu_name: 'RTX 4090',
      num_gpus: 1,
      gpu_ram: 24564,
      cpu_ram: 257_024,
      dph_total: 0.4,
      sim: { host: { proofSec: 80, startupSec: 20, paramfetchSec: 60 }, instance: { loadingSec: 10 } },
    }),
  );
  const stack = await startSimStack(offers, { headless: true }, log);
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 200);
  const cpu0 = process.cpuUsage();
  const t0 = Date.now();
  try {
    const decided = await runFleet(stack, offers, `scale${n}`, 3);
    const wall = (Date.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const latency = await stack.pool.query<{ ms: number }>(
      `SELECT EXTRACT(EPOCH FROM (v.at - e.at)) * 1000 AS ms FROM lifecycle_events e
       JOIN lifecycle_events v ON v.workflow_id = e.workflow_id AND v.stage IN ('promoted', 'killing')
       WHERE e.stage = 'evaluating' AND e.workflow_id LIKE $1`,
      [`scale${n}-%`],
    );
    const lat = latency.rows.map((r) => Number(r.ms)).sort((a, b) => a - b);
    const events = await Promise.all(
      decided.map(
        async (l) => (await stack.client.workflow.getHandle(l.workflowId).fetchHistory()).events?.length ?? 0,
      ),
    );
    await Promise.all(
      decided.map((l) =>
        stack.client.workflow
          .getHandle(l.workflowId)
          .cancel()
          .catch(() => undefined),
      ),
    );
    return {
      n,
      promoted: decided.filter((l) => l.verdict === 'promoted').length,
      wallSec: round(wall, 1),
      lifecyclesPerSec: round(n / wall, 3),
      decisionLatencyMs: { p50: pct(lat, 0.5), p99: pct(lat, 0.99) },
      historyEventsAtVerdict: {
        mean: round(events.reduce((a, b) => a + b, 0) / events.length, 1),
        max: Math.max(...events),
      },
      controlProcessCpuSec: round((cpu.user + cpu.system) / 1e6, 1),
      controlProcessPeakRssMiB: Math.round(peakRss / 2 ** 20),
    };
  } finally {
    clearInterval(sampler);
    await stack.close();
  }
}

const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;
const pct = (sorted: number[], p: number) =>
  sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!) : null;

async function main() {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const catalogue = CatalogueSchema.parse(
    JSON.parse(readFileSync(path.join(ROOT, 'infra/sim/scenarios/demo.json'), 'utf8')),
  );
  // Smoke: one healthy, one too slow, one crashing host.
  const fleet = smoke
    ? catalogue.offers.filter((o) => [32740552, 32709911, 32733029].includes(o.id))
    : catalogue.offers;
  const moneyResult = await money(fleet);
  const scaleResults = [];
  for (const n of smoke ? [3] : [5, 10, 20]) scaleResults.push(await scaleRun(n));
  const result = {
    date: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      memGiB: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
    },
    timeScale: scale,
    smoke,
    money: moneyResult,
    scale: scaleResults,
  };
  mkdirSync(path.join(ROOT, 'bench-results'), { recursive: true });
  const file = path.join(ROOT, 'bench-results', `${smoke ? 'smoke' : 'full'}-${result.date.slice(0, 10)}.json`);
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  console.log('\nMoney (real-time-equivalent minutes and dollars of GPU time, per host):');
  console.table(moneyResult.perHost);
  console.log(
    `GPU-$ on bad hosts: baseline ${moneyResult.badHostDollars.baseline}, early stop ${moneyResult.badHostDollars.earlyStop} (saving ${Math.round(moneyResult.savingOnBadHosts * 100)} %); healthy hosts wrongly killed: ${moneyResult.wronglyKilledHealthy.length}`,
  );
  console.log('\nScale (compressed time):');
  console.table(
    scaleResults.map((r) => ({
      ...r,
      decisionLatencyMs: `p50 ${r.decisionLatencyMs.p50} / p99 ${r.decisionLatencyMs.p99}`,
      historyEventsAtVerdict: `mean ${r.historyEventsAtVerdict.mean}, max ${r.historyEventsAtVerdict.max}`,
    })),
  );
  console.log(`\nwritten to ${path.relative(ROOT, file)}`);
  if (moneyResult.wronglyKilledHealthy.length > 0) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
