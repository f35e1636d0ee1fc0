import { metricMeter } from '@temporalio/workflow';

/**
 * Fleet metrics, emitted from workflow code through the worker's Prometheus exporter (never during
 * replay). Only monotonic counters and histograms: gauges kept by workflows would drift across worker
 * restarts. Current spend = fleet_dph_rented_total - fleet_dph_released_total.
 */
export const fleetMetrics = {
  stageEntered(stage: string): void {
    metricMeter
      .createCounter('fleet_lifecycle_stage_entered', undefined, 'lifecycles entering each stage')
      .add(1, { stage });
  },
  outcome(outcome: string, failureType: string, gpu: string): void {
    metricMeter
      .createCounter('fleet_lifecycle_outcomes', undefined, 'lifecycles ended, by outcome and failure type')
      .add(1, { outcome, failure_type: failureType, gpu });
  },
  benchRate(rate: number, gpu: string): void {
    metricMeter
      .createHistogram('fleet_benchmark_rate', 'float', 'proofs/h', 'benchmark proofs per hour')
      .record(rate, { gpu });
  },
  rented(dph: number): void {
    metricMeter
      .createCounter('fleet_dph_rented', 'usd_per_hour', '$/h of instances rented')
      .add(Math.round(dph * 1000), { unit: 'milli_usd' });
  },
  released(dph: number): void {
    metricMeter
      .createCounter('fleet_dph_released', 'usd_per_hour', '$/h of instances destroyed')
      .add(Math.round(dph * 1000), { unit: 'milli_usd' });
  },
};
