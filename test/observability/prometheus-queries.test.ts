import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { startFleetCollector, type FleetCollector } from '../../workers/setup/fleet-collector.js';
import { formatUsd } from '../../workflows/domain/policy/cost.js';
import { ensureScalerSchedule } from '../../workers/setup/schedules.js';
import { expectPromoted } from '../helpers/expect-promoted.js';
import { fleetScaler, type FleetScalerInput } from '../../workflows/fleet-scaler.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { expectKilled } from '../helpers/expect-kill.js';
import { fleetBase } from '../helpers/fleet-base.js';
import { fastRequest, type FleetEnv, METRICS_URL, startFleetEnv } from '../helpers/fleet-env.js';
import { simOffer } from '../helpers/offers.js';
import { pollUntil } from '../../infra/dev/poll.js';
import { OBSERVABILITY_DIR, type Prom, requireTool, startPrometheus } from './prometheus.js';

/**
 * Every query the dashboard draws and every alert rule evaluates runs against a real Prometheus that
 * scrapes a real control worker's one /metrics (metrics-server.ts, as workers/control-worker.ts serves it)
 * after a small simulated fleet has lived: a promote, two kills under $1, a budget refusal, a failing
 * workflow task. A metric renamed in code and not in the dashboard or rules fails here, and so does a
 * killed host's dollars that /metrics, the CLI and the UI do not agree on to the cent.
 */
const SCALE = 0.01;
const healthy = simOffer({ gpu_name: 'RTX 4090', num_gpus: 2, host: { proofSec: 100 } });
// Two kills under $1 each (about an hour of real rented time at these prices), over a dime so cents show.
const slow = simOffer({ gpu_name: 'RTX 3060', num_gpus: 1, dph_total: 0.35, host: { proofSec: 600 } });
const slower = simOffer({ gpu_name: 'RTX A4000', num_gpus: 1, dph_total: 0.45, host: { proofSec: 700 } });
const spare = simOffer({ gpu_name: 'RTX 4090', num_gpus: 2, dph_total: 0.9 });
const MIN_RATE = 29;
// CI machines are shared: a stall check of 3 s fails a healthy paramfetch under load.
const LOADED = { paramfetchStallSec: 15 };

const Dashboard = z.object({
  panels: z.array(z.object({ title: z.string(), targets: z.array(z.object({ expr: z.string() })).min(1) })).min(1),
});
const Rules = z.object({
  groups: z.array(z.object({ rules: z.array(z.object({ alert: z.string(), expr: z.string() })).min(1) })),
});
const dashboard = Dashboard.parse(
  JSON.parse(readFileSync(path.join(OBSERVABILITY_DIR, 'grafana/dashboards/gpu-fleet.json'), 'utf8')),
);
const ALERTS = path.join(OBSERVABILITY_DIR, 'alerts.yml');
const rules = Rules.parse(parse(readFileSync(ALERTS, 'utf8'))).groups.flatMap((g) => g.rules);

/** Metric names a PromQL expression reads (fleet's and the SDK's). */
function metricNames(expr: string): string[] {
  return [...new Set(expr.match(/\b(?:fleet|temporal)_[a-z0-9_]+/g) ?? [])];
}

let env: FleetEnv;
let prom: Prom;
let collector: FleetCollector;
const testStart = new Date().toISOString();
let scalerInput: FleetScalerInput;
const scheduleId = `test-scaler-${randomUUID()}`;

beforeAll(async () => {
  env = await startFleetEnv([healthy, slow, slower, spare]);
  // Shared database and namespace: rentals other files left count into the target and caps, so these
  // leave room above them (this file's own promote included); only the budget may hold the fleet short.
  const base = await fleetBase(env.client, env.pool);
  scalerInput = {
    targetRate: base.rate + 1000 / SCALE,
    // Below any offer's price: the scaler must refuse on budget.
    maxDph: 0.05,
    maxInstances: base.instances + 4,
    maxConcurrentBenchmarks: base.benchmarks + 4,
    explorationSlots: 4,
    minRate: MIN_RATE,
    offerCheckSec: 1,
    filter: { gpuModels: ['RTX 4090'], minRamMb: 0, minReliability: 0, minCuda: 0, maxOfferDph: 5 },
  };
  // Paused: the collector reads target and budget from it; the test runs the scaler itself.
  await ensureScalerSchedule(env.client, {
    scheduleId,
    intervalSec: 3600,
    input: scalerInput,
    taskQueue: env.taskQueue,
    paused: true,
  });
  collector = startFleetCollector({ pool: env.pool, client: env.client, intervalMs: 500, scheduleId });
  // The worker's one /metrics as production serves it (test/helpers/fleet-env.ts, metrics-server.ts).
  prom = await startPrometheus(new URL(METRICS_URL).host, [ALERTS]);

  // A promote and a kill.
  const promoteId = `obs-promote-${healthy.id}`;
  await env.client.workflow.start(instanceLifecycle, {
    taskQueue: env.taskQueue,
    workflowId: promoteId,
    args: [fastRequest(healthy.id, { minRate: MIN_RATE, timeouts: LOADED })],
    workflowExecutionTimeout: '5 minutes',
  });
  await Promise.all(
    [slow, slower].map((o) =>
      expectKilled(
        env,
        `obs-kill-${o.id}`,
        fastRequest(o.id, { minRate: MIN_RATE, timeouts: LOADED }),
        'BenchRateBelowMin',
      ),
    ),
  );
  await expectPromoted(env.client, promoteId);
  // A scaler run the budget refuses.
  await env.client.workflow.execute(fleetScaler, {
    taskQueue: env.taskQueue,
    workflowId: `obs-scaler-${randomUUID()}`,
    args: [scalerInput],
  });
  // A workflow task that fails (a type this worker does not know), as a code bug would.
  const broken = await env.client.workflow.start('noSuchWorkflow', {
    taskQueue: env.taskQueue,
    workflowId: `obs-broken-${randomUUID()}`,
    args: [],
  });
  await pollUntil(
    'a failed workflow task in /metrics',
    async () =>
      (await (await fetch(METRICS_URL)).text()).includes('temporal_workflow_task_execution_failed') ? 1 : undefined,
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  await broken.terminate('test done');
  await collector.collect();
  // Prometheus has scraped all of it and rate() windows have two samples.
  await pollUntil(
    'prometheus scraped the fleet',
    async () => {
      const r = await prom.query('fleet_budget_refusals_total > 0');
      return (r.data?.result.length ?? 0) > 0 ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 500 },
  );
  await new Promise((r) => setTimeout(r, 3000));
}, 300_000);

afterAll(async () => {
  // The promoted lifecycle keeps watching its host: an operator's cancel destroys it.
  const promoted = env?.client.workflow.getHandle(`obs-promote-${healthy.id}`);
  await promoted?.cancel().catch(() => undefined);
  await promoted?.result().catch(() => undefined);
  collector?.stop();
  await prom?.close();
  await env?.close();
  await env?.client.schedule
    .getHandle(scheduleId)
    .delete()
    .catch(() => undefined);
});

describe('dashboard and alert queries against a live Prometheus', () => {
  it.each(dashboard.panels.flatMap((p) => p.targets.map((t) => [p.title, t.expr] as const)))(
    'panel "%s" has data: %s',
    async (_title, expr) => {
      const r = await prom.query(expr);
      expect(r.status, r.error).toBe('success');
      expect(r.data?.result.length, `no data for ${expr}`).toBeGreaterThan(0);
    },
  );

  it.each(rules.map((r) => [r.alert, r.expr] as const))(
    'rule %s evaluates over metrics that exist',
    async (_a, expr) => {
      const r = await prom.query(expr);
      expect(r.status, r.error).toBe('success');
      const names = metricNames(expr);
      expect(names.length).toBeGreaterThan(0);
      for (const name of names) {
        const m = await prom.query(`count(${name})`);
        expect(m.data?.result.length, `${name} is not exported`).toBeGreaterThan(0);
      }
    },
  );

  it('the fleet metrics pass promtool check metrics as served (naming, unit and label conventions)', async () => {
    const text = await (await fetch(METRICS_URL)).text();
    const fleet = text
      .split('\n')
      .filter((l) => /^(# (HELP|TYPE) )?fleet_/.test(l))
      .join('\n');
    // Every family the dashboard and rules use is there, with a TYPE; dollars and spend are counters.
    expect(fleet).toMatch(/# TYPE fleet_lifecycle_outcomes_total counter/);
    expect(fleet).toMatch(/# TYPE fleet_spend_usd_total counter/);
    expect(fleet).toMatch(/# TYPE fleet_gpu_dollars_total counter/);
    expect(fleet).toMatch(/# TYPE fleet_benchmark_rate_proofs_per_hour histogram/);
    // Our labels only: no SDK tags (taskQueue, workflowType), no unit label.
    expect(fleet).not.toMatch(/taskQueue|workflowType|unit="/);
    const r = spawnSync(requireTool('promtool'), ['check', 'metrics'], { input: fleet + '\n', encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
    // The whole /metrics too: the SDK's families with their doubled `_total` renamed (metrics-server.ts).
    expect(text).toContain('temporal_workflow_task_execution_failed_total');
    const all = spawnSync(requireTool('promtool'), ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(all.stdout + all.stderr).toBe('');
  });

  it('Prometheus loaded every rule and evaluates it without error', async () => {
    const res = (await (await fetch(`${prom.url}/api/v1/rules`)).json()) as {
      data: { groups: Array<{ rules: Array<{ name: string; health: string; lastError?: string }> }> };
    };
    const loaded = res.data.groups.flatMap((g) => g.rules);
    expect(loaded.map((r) => r.name).sort()).toEqual(rules.map((r) => r.alert).sort());
    for (const r of loaded) expect(r.health, `${r.name}: ${r.lastError ?? ''}`).toBe('ok');
  });

  it('the workflow-task-failure alert fires for the broken workflow, and fleet totals are real', async () => {
    const firing = await pollUntil(
      'FleetWorkflowTaskFailures firing',
      async () => {
        const res = (await (await fetch(`${prom.url}/api/v1/alerts`)).json()) as {
          data: { alerts: Array<{ labels: Record<string, string>; state: string }> };
        };
        return res.data.alerts.find((a) => a.labels.alertname === 'FleetWorkflowTaskFailures' && a.state === 'firing');
      },
      { timeoutMs: 15_000, intervalMs: 500 },
    );
    expect(firing.labels.workflow_type).toBe('noSuchWorkflow');
    const value = async (expr: string) => Number((await prom.query(expr)).data?.result[0]?.value[1]);
    expect(await value('sum(fleet_budget_refusals_total)')).toBeGreaterThanOrEqual(1);
    expect(await value('max(fleet_spend_usd_total)')).toBeGreaterThan(0);
    expect(await value('max(fleet_spend_usd_per_hour)')).toBeGreaterThanOrEqual(healthy.dph_total);
    expect(await value('max(fleet_target_rate_proofs_per_hour)')).toBeCloseTo(scalerInput.targetRate, 6);
    expect(await value('max(fleet_instances{state="promoted"})')).toBeGreaterThanOrEqual(1);
    // Buckets that resolve real rates (10-100 proofs/h), not the SDK's latency buckets.
    expect(await value('count(fleet_benchmark_rate_proofs_per_hour_bucket{le="30"})')).toBeGreaterThan(0);
  });

  it('two kills under $1 read the same to the cent in /metrics, status, fleet status, report and the UI details', async () => {
    const text = await (await fetch(METRICS_URL)).text();
    const report = ReportJson.parse(
      JSON.parse((await cli('report', '--since', testStart, '--by', 'gpu', '--json')).stdout),
    );
    // The killed hosts are closed: `fleet status` lists them with --ended, at the cost closed at the destroy.
    const fleet = FleetJson.parse(JSON.parse((await cli('fleet', 'status', '--ended', '1h', '-o', 'json')).stdout));
    for (const o of [slow, slower]) {
      const workflowId = `obs-kill-${o.id}`;
      // What the lifecycle counted at its kill, to the cent: the waste series of its GPU.
      const usd = sample(text, 'fleet_gpu_dollars_total', {
        outcome: 'killed',
        phase: 'before_verdict',
        gpu: o.gpu_name,
      });
      expect(usd, workflowId).toBeGreaterThan(0.1);
      expect(usd, workflowId).toBeLessThan(1);
      const cents = formatUsd(usd);
      expect(cents).toMatch(/^\$0\.\d\d$/);
      // gpu-fleet status: cost to date, closed at the destroy.
      expect((await cli('status', workflowId)).stdout).toMatch(new RegExp(`cost to date\\s+\\${cents} GPU-\\$`));
      // gpu-fleet fleet status --ended 1h: its row, ended, with its verdict as the stage.
      const row = fleet.lifecycles.find((l) => l.workflowId === workflowId && l.endedAt !== null);
      expect(row?.stage, `fleet status --ended 1h for ${workflowId}`).toMatch(/^killed /);
      expect(row && row.costUsd !== null && formatUsd(row.costUsd)).toBe(cents);
      // gpu-fleet report: the waste and spend of its GPU (only this rental of it since the test started).
      const group = report.groups.find((g) => g.key.includes(o.gpu_name));
      expect(group && formatUsd(group.wasteUsd), `report --by gpu for ${o.gpu_name}`).toBe(cents);
      expect(group && formatUsd(group.spentUsd)).toBe(cents);
      // The Temporal UI: the kill's summary as current details, and the failure's message.
      const handle = env.client.workflow.getHandle(workflowId);
      const meta = UiMetadata.parse(await handle.query('__temporal_workflow_metadata'));
      // Markdown, as the UI renders it: `\$` shows as `$`.
      expect(meta.currentDetails.replace(/\\(.)/g, '$1')).toContain(`cost ${cents}`);
      const failure = await handle.result().then(
        () => '',
        (e: unknown) => String(e instanceof Error && e.cause instanceof Error ? e.cause.message : e),
      );
      expect(failure).toContain(`cost ${cents}`);
    }
  });
});

const ReportJson = z.object({
  groups: z.array(z.object({ key: z.string(), wasteUsd: z.number(), spentUsd: z.number() })),
});
const FleetJson = z.object({
  lifecycles: z.array(
    z.object({
      workflowId: z.string(),
      stage: z.string(),
      costUsd: z.number().nullable(),
      endedAt: z.string().nullable(),
    }),
  ),
});
const UiMetadata = z.object({ currentDetails: z.string() }).loose();

/** A sample's value in Prometheus text, by name and exactly these labels (in any order). */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort()
    .join(',');
  for (const line of text.split('\n')) {
    const m = /^([a-z_:][a-z0-9_:]*)\{(.*)\} (\S+)$/i.exec(line);
    if (m?.[1] === name && (m[2] ?? '').split(',').sort().join(',') === want) return Number(m[3]);
  }
  throw new Error(`no ${name}{${want}} in /metrics`);
}

/** The operator's CLI as they run it (bin/gpu-fleet.mjs), against this file's server and store. */
async function cli(...args: string[]): Promise<{ stdout: string }> {
  const env = { ...process.env, TEMPORAL_ADDRESS: inject('temporalAddress'), DATABASE_URL: inject('databaseUrl') };
  return promisify(execFile)(process.execPath, ['bin/gpu-fleet.mjs', ...args], { env, encoding: 'utf8' });
}
