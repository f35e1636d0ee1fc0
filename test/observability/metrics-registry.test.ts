import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WorkflowInfo } from '@temporalio/workflow';
import { describe, expect, it } from 'vitest';
import { createFleetRegistry, fleetMetricsSinks } from '../../workers/setup/metrics-registry.js';
import { sdkExposition, serveMetrics } from '../../workers/setup/metrics-server.js';

/**
 * The worker side of the workflows' metrics sink: what a lifecycle reports lands in the registry as dollars
 * with cents (the SDK's integer counters exported 0 for a $0.37 kill), under our own labels, and the one
 * /metrics serves it beside the SDK's families. promtool's lint of a live worker's text is e2e
 * (prometheus-queries.test.ts: promtool is not in a fresh clone).
 */
// The sinks ignore the workflow's info; the SDK passes it first.
const info = {} as WorkflowInfo;

function sinks() {
  const r = createFleetRegistry();
  return { r, m: fleetMetricsSinks(r).fleetMetrics };
}

describe('fleet metrics registry', () => {
  it('counts two sub-dollar kills to the cent, by outcome, phase and gpu', async () => {
    const { r, m } = sinks();
    await m.rented.fn(info, 'RTX 3060');
    await m.gpuDollars.fn(info, 0.37, 'killed', 'before_verdict', 'RTX 3060');
    await m.gpuDollars.fn(info, 0.44, 'killed', 'before_verdict', 'RTX 3060');
    await m.gpuDollars.fn(info, 0.2, 'killed', 'production', 'RTX 4090');
    const text = await r.registry.metrics();
    expect(text).toContain('fleet_gpu_dollars_total{outcome="killed",phase="before_verdict",gpu="RTX 3060"} 0.81');
    expect(text).toContain('fleet_gpu_dollars_total{outcome="killed",phase="production",gpu="RTX 4090"} 0.2');
    // Born at 0 at the rent, so Prometheus's increase() sees the first kill's dollars.
    expect(text).toContain('fleet_gpu_dollars_total{outcome="promoted",phase="before_verdict",gpu="RTX 3060"} 0');
    expect(text).toMatch(/# TYPE fleet_gpu_dollars_total counter/);
  });

  it('labels every family in snake_case, with no SDK labels and no doubled _total', async () => {
    const { r, m } = sinks();
    await m.stageEntered.fn(info, 'benchmark');
    await m.outcome.fn(info, 'killed', 'BenchRateBelowMin', 'RTX 3060');
    await m.benchRate.fn(info, 18.5, 'RTX 3060');
    await m.timeToVerdict.fn(info, 640, 'killed');
    await m.destroyFailed.fn(info, 'HostLost');
    await m.budgetRefused.fn(info);
    await m.orphanDestroyed.fn(info);
    const text = await r.registry.metrics();
    const labels = [...text.matchAll(/[{,]([A-Za-z_]+)="/g)].map((x) => x[1]);
    expect(new Set(labels)).toEqual(new Set(['stage', 'outcome', 'failure_type', 'gpu', 'le', 'kill_reason']));
    expect(text).not.toMatch(/_total_total|taskQueue|workflowType/);
    expect(text).toContain('fleet_benchmark_rate_proofs_per_hour_bucket{le="20",gpu="RTX 3060"} 1');
    expect(text).toContain('fleet_time_to_verdict_seconds_sum{outcome="killed"} 640');
    expect(text).toContain('fleet_budget_refusals_total 1');
    expect(text).toContain('fleet_destroy_failed_total{kill_reason="HostLost"} 1');
  });

  it("serves one /metrics: ours, then the SDK's with its doubled _total and any fleet_* family removed", async () => {
    const sdk = createServer((_req, res) =>
      res.end(
        [
          '# HELP temporal_local_activity_total_total Count of local activities',
          '# TYPE temporal_local_activity_total_total counter',
          'temporal_local_activity_total_total{namespace="default"} 3',
          '# TYPE fleet_gpu_dollars_total counter',
          'fleet_gpu_dollars_total{taskQueue="q",workflowType="w"} 0',
          'temporal_request_total{operation="Poll"} 7',
        ].join('\n'),
      ),
    );
    await new Promise<void>((resolve) => sdk.listen(0, '127.0.0.1', () => resolve()));
    const { r, m } = sinks();
    await m.gpuDollars.fn(info, 0.37, 'killed', 'before_verdict', 'A40');
    const endpoint = await serveMetrics({
      bind: '127.0.0.1:0',
      registry: r.registry,
      sdkUrl: `http://127.0.0.1:${(sdk.address() as AddressInfo).port}/metrics`,
    });
    try {
      const text = await (await fetch(endpoint.url)).text();
      expect(text).toContain('fleet_gpu_dollars_total{outcome="killed",phase="before_verdict",gpu="A40"} 0.37');
      expect(text).toContain('# TYPE temporal_local_activity_total counter');
      expect(text).toContain('temporal_local_activity_total{namespace="default"} 3');
      expect(text).toContain('temporal_request_total{operation="Poll"} 7');
      expect(text).not.toMatch(/taskQueue|_total_total/);
      expect(text.match(/# TYPE fleet_gpu_dollars_total/g)).toHaveLength(1);
      expect((await fetch(endpoint.url.replace('/metrics', '/other'))).status).toBe(404);
    } finally {
      await endpoint.close();
      sdk.close();
    }
  });

  it('keeps a name that merely contains _total', () => {
    expect(sdkExposition('temporal_total_slots_available 4')).toBe('temporal_total_slots_available 4');
  });
});
