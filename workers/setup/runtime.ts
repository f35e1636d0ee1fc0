import { type LogLevel, makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import type { Registry } from 'prom-client';
import { createLogger } from './logger.js';
import { loopbackPort, type MetricsEndpoint, serveMetrics } from './metrics-server.js';

/**
 * The SDK's Prometheus exporter options: counters end in _total, histograms carry their unit
 * (temporal_*_seconds), durations are in seconds. Its text reaches operators through our /metrics
 * (metrics-server.ts), not directly.
 */
export function prometheusOptions(bindAddress: string) {
  return { bindAddress, countersTotalSuffix: true, unitSuffix: true, useSecondsForDurations: true };
}

/**
 * One Temporal runtime per process. Logs are JSON lines (pino) from our code, workflows, activities
 * and the SDK's core. With `metricsBind` (e.g. 0.0.0.0:9464) the process serves one /metrics there: the
 * fleet_* families of `registry` (a control worker's, metrics-registry.ts) and the SDK's own (task
 * latencies, failures, slots), which the SDK exports on a loopback port only this server reads.
 */
export async function installRuntime(opts: {
  metricsBind?: string;
  logLevel?: LogLevel;
  registry?: Registry;
}): Promise<MetricsEndpoint | null> {
  const level = opts.logLevel ?? 'INFO';
  const sdkBind = opts.metricsBind ? `127.0.0.1:${await loopbackPort()}` : null;
  Runtime.install({
    logger: createLogger(level),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: level === 'INFO' ? 'WARN' : level }), forward: {} },
      ...(sdkBind ? { metrics: { prometheus: prometheusOptions(sdkBind) } } : {}),
    },
  });
  if (!opts.metricsBind || !sdkBind) return null;
  return serveMetrics({
    bind: opts.metricsBind,
    sdkUrl: `http://${sdkBind}/metrics`,
    ...(opts.registry ? { registry: opts.registry } : {}),
  });
}
