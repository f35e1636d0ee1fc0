import { type LogLevel, makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import { createLogger } from './logger.js';

/** Benchmark rates of real hosts are 10–100 proofs/h: buckets resolve that range (workflows/metrics.ts). */
export const BENCH_RATE_BUCKETS = [5, 10, 15, 20, 25, 30, 40, 50, 60, 80, 100, 150, 200];

/** Rent to verdict in seconds: minutes (a dead host) to hours (a full benchmark). */
const VERDICT_SECONDS_BUCKETS = [60, 300, 600, 900, 1200, 1800, 2700, 3600, 5400, 7200, 10800];

/**
 * The Prometheus exporter's options: counters end in _total, histograms carry their unit
 * (temporal_*_seconds), durations are in seconds, fleet histograms get buckets that fit their values.
 */
export function prometheusOptions(bindAddress: string) {
  return {
    bindAddress,
    countersTotalSuffix: true,
    unitSuffix: true,
    useSecondsForDurations: true,
    histogramBucketOverrides: {
      fleet_benchmark_rate_proofs_per_hour: BENCH_RATE_BUCKETS,
      fleet_time_to_verdict_seconds: VERDICT_SECONDS_BUCKETS,
    },
  };
}

/**
 * One Temporal runtime per process. Logs are JSON lines (pino) from our code, workflows, activities
 * and the SDK's core. With `metricsBind` (e.g. 0.0.0.0:9464) it serves Prometheus metrics at /metrics:
 * the SDK's own (task latencies, failures, slots) plus the fleet_* metrics (workflows/metrics.ts,
 * workers/setup/fleet-collector.ts).
 */
export function installRuntime(opts: { metricsBind?: string; logLevel?: LogLevel }): void {
  const level = opts.logLevel ?? 'INFO';
  Runtime.install({
    logger: createLogger(level),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: level === 'INFO' ? 'WARN' : level }), forward: {} },
      ...(opts.metricsBind ? { metrics: { prometheus: prometheusOptions(opts.metricsBind) } } : {}),
    },
  });
}
