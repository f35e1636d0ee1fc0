import { DefaultLogger, type LogLevel, Runtime } from '@temporalio/worker';

/**
 * One Temporal runtime per process. With `metricsBind` (e.g. 0.0.0.0:9464) it serves Prometheus
 * metrics at /metrics: the SDK's own (task latencies, pollers, slots) plus the fleet_* metrics that
 * workflows emit (workflows/metrics.ts).
 */
export function installRuntime(opts: { metricsBind?: string; logLevel?: LogLevel }): void {
  Runtime.install({
    logger: new DefaultLogger(opts.logLevel ?? 'INFO'),
    ...(opts.metricsBind ? { telemetryOptions: { metrics: { prometheus: { bindAddress: opts.metricsBind } } } } : {}),
  });
}
