import { log, proxySinks, workflowInfo } from '@temporalio/workflow';
import type { CostFigures } from './domain/policy/cost.js';
import type { FleetMetricsSinks, MetricOutcome } from './metrics-sinks.js';

const { fleetMetrics: metricsSink } = proxySinks<FleetMetricsSinks>();

/**
 * The sink, or none while replaying history. The worker drops replayed calls anyway; not making them
 * keeps a replay without the sink (`gpu-fleet replay`, Worker.runReplayHistory) from logging each as
 * an unregistered sink. No command depends on it, so it cannot change what the workflow decides.
 */
const sink = () => (workflowInfo().unsafe.isReplayingHistoryEvents ? null : metricsSink);

/**
 * Fleet metrics reported from workflow code to the worker's registry through a sink (metrics-sinks.ts;
 * never during replay). The worker names, labels and exports them (workers/setup/metrics-registry.ts).
 *
 * Rates, durations and dollars are real: the lifecycle converts its clock (policy/clock.ts, the demo's
 * compressed time included) before it reports.
 */
export const fleetMetrics = {
  stageEntered(stage: string): void {
    sink()?.stageEntered(stage);
  },
  outcome(outcome: MetricOutcome, failureType: string, gpu: string): void {
    sink()?.outcome(outcome, failureType, gpu);
  },
  benchRate(rate: number, gpu: string): void {
    sink()?.benchRate(rate, gpu);
  },
  /** Seconds from renting to the verdict (promote or kill): what a verdict costs in rented time. */
  timeToVerdictSeconds(seconds: number, outcome: MetricOutcome): void {
    sink()?.timeToVerdict(seconds, outcome);
  },
  /**
   * GPU-$ a rental cost, by phase: at the promotion its cost of finding out; at the kill the rest. A kill
   * after a promotion (`verdictCounted`) adds only the production part, so no dollar is counted twice and
   * `{outcome="killed", phase="before_verdict"}` is the waste: rentals killed before a promotion.
   */
  spent(cost: CostFigures, outcome: MetricOutcome, gpu: string, verdictCounted = false): void {
    if (!verdictCounted) sink()?.gpuDollars(cost.beforeVerdictUsd, outcome, 'before_verdict', gpu);
    if (cost.productionUsd > 0) sink()?.gpuDollars(cost.productionUsd, outcome, 'production', gpu);
  },
  rented(gpu: string): void {
    sink()?.rented(gpu);
  },
  /** A destroy that failed for an hour: the instance may still be billing. */
  destroyFailed(killReason: string): void {
    sink()?.destroyFailed(killReason);
  },
  /** A scaler run that wanted capacity but could not rent within its $/h budget. */
  budgetRefused(): void {
    sink()?.budgetRefused();
  },
  orphanDestroyed(): void {
    sink()?.orphanDestroyed();
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
