import { log, metricMeter } from '@temporalio/workflow';
import { FLEET_EVENT_COUNTERS as C } from './domain/metric-names.js';
import type { CostFigures } from './domain/policy/cost.js';

/**
 * Fleet metrics emitted from workflow code through the worker's Prometheus exporter (never during
 * replay). Names carry their unit; no unit is passed to the meter, so the exporter's unit suffix cannot
 * double it. Counters are named without `_total`: the exporter appends it (countersTotalSuffix). Only
 * counters and histograms here: a gauge kept by a workflow would drift across worker restarts (fleet
 * totals such as spend come from the store, see workers/setup/fleet-collector.ts).
 *
 * Rates, durations and dollars are real: the lifecycle converts its clock (policy/clock.ts, the demo's
 * compressed time included) before it reports.
 */

export const fleetMetrics = {
  stageEntered(stage: string): void {
    metricMeter
      .createCounter('fleet_lifecycle_stage_entered', undefined, 'lifecycles entering each stage')
      .add(1, { stage });
  },
  outcome(outcome: 'promoted' | 'killed', failureType: string, gpu: string): void {
    metricMeter
      .createCounter('fleet_lifecycle_outcomes', undefined, 'lifecycles ended, by outcome and failure type')
      .add(1, { outcome, failure_type: failureType, gpu });
  },
  benchRate(rate: number, gpu: string): void {
    metricMeter
      .createHistogram('fleet_benchmark_rate_proofs_per_hour', 'float', undefined, 'benchmark rate (proofs/h)')
      .record(rate, { gpu });
  },
  /** Seconds from renting to the verdict (promote or kill): what a verdict costs in rented time. */
  timeToVerdictSeconds(seconds: number, outcome: 'promoted' | 'killed'): void {
    metricMeter
      .createHistogram('fleet_time_to_verdict_seconds', 'float', undefined, 'rent to verdict (s)')
      .record(seconds, { outcome });
  },
  /** GPU-$ a rental cost up to its verdict or kill, by phase: what finding out costs, and what kills waste. */
  spent(cost: CostFigures, outcome: 'promoted' | 'killed', gpu: string): void {
    const counter = metricMeter.createCounter('fleet_gpu_dollars', undefined, 'GPU-$ spent at the billed price');
    counter.add(cost.beforeVerdictUsd, { outcome, phase: 'before_verdict', gpu });
    if (cost.productionUsd > 0) counter.add(cost.productionUsd, { outcome, phase: 'production', gpu });
  },
  rented(gpu: string): void {
    metricMeter.createCounter('fleet_instances_rented', undefined, 'instances rented').add(1, { gpu });
  },
  /** A destroy that failed for an hour: the instance may still be billing. */
  destroyFailed(killReason: string): void {
    metricMeter
      .createCounter(C.destroyFailed.name, undefined, C.destroyFailed.help)
      .add(1, { kill_reason: killReason });
  },
  /** A scaler run that wanted capacity but could not rent within its $/h budget. */
  budgetRefused(): void {
    metricMeter.createCounter(C.budgetRefusals.name, undefined, C.budgetRefusals.help).add(1);
  },
  orphanDestroyed(): void {
    metricMeter.createCounter(C.orphansDestroyed.name, undefined, C.orphansDestroyed.help).add(1);
  },
};

/** What every lifecycle log line carries, so one grep finds an instance's whole life. */
export interface LifecycleLogFields {
  rentalKey: string;
  instanceId: number | null;
  machineId: number | null;
  gpu: string | null;
  /** Price Vast bills for the instance ($/h). */
  dphUsd: number | null;
}

/** One structured line (JSON through the worker's logger); the SDK adds workflowId and run id. */
export function lifecycleLog(
  event: 'rent' | 'stage' | 'kill' | 'promote' | 'price',
  fields: LifecycleLogFields & Record<string, string | number | boolean | null>,
): void {
  log.info(`lifecycle ${event}`, { event, ...fields });
}
