import type { Sinks } from '@temporalio/workflow';

/** How a rental's verdict went; `killed` covers a kill before or after a promotion. */
export type MetricOutcome = 'promoted' | 'killed';

/** What a GPU-$ was spent on: finding out (rent to verdict) or proving (after a promotion). */
export type SpendPhase = 'before_verdict' | 'production';

/**
 * The fleet's metrics as workflow code reports them: a sink (`proxySinks`), so the worker process keeps
 * the values in a Prometheus client registry (workers/setup/metrics-registry.ts) with our own labels and
 * dollars as floats. Sink calls are not made while a worker replays history and never enter it: metrics
 * count each event once, and adding or changing one is not a workflow change.
 */
export interface FleetMetricsSinks extends Sinks {
  fleetMetrics: {
    stageEntered(stage: string): void;
    outcome(outcome: MetricOutcome, failureType: string, gpu: string): void;
    benchRate(rateProofsPerHour: number, gpu: string): void;
    timeToVerdict(seconds: number, outcome: MetricOutcome): void;
    gpuDollars(usd: number, outcome: MetricOutcome, phase: SpendPhase, gpu: string): void;
    rented(gpu: string): void;
    destroyFailed(killReason: string): void;
    budgetRefused(): void;
    orphanDestroyed(): void;
  };
}
