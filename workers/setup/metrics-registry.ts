import type { InjectedSinks } from '@temporalio/worker';
import { Counter, Histogram, Registry } from 'prom-client';
import { FLEET_EVENT_COUNTERS as E } from '../../workflows/domain/metric-names.js';
import type { FleetMetricsSinks } from '../../workflows/metrics-sinks.js';

/** Benchmark rates of real hosts are 10–100 proofs/h: buckets resolve that range. */
export const BENCH_RATE_BUCKETS = [5, 10, 15, 20, 25, 30, 40, 50, 60, 80, 100, 150, 200];

/** Rent to verdict in seconds: minutes (a dead host) to hours (a full benchmark). */
export const VERDICT_SECONDS_BUCKETS = [60, 300, 600, 900, 1200, 1800, 2700, 3600, 5400, 7200, 10800];

/**
 * The fleet_* families the lifecycles and the scaler report (through the sink, workflows/metrics-sinks.ts),
 * in a Prometheus client registry of this process: our own snake_case labels, dollars as floats, counters
 * named with their `_total`. They count from this process's start (a counter's reset at a restart is what
 * Prometheus's increase() expects); the store's totals are the collector's (fleet-collector.ts).
 */
export interface FleetRegistry {
  registry: Registry;
  stageEntered: Counter<'stage'>;
  outcomes: Counter<'outcome' | 'failure_type' | 'gpu'>;
  benchRate: Histogram<'gpu'>;
  timeToVerdict: Histogram<'outcome'>;
  gpuDollars: Counter<'outcome' | 'phase' | 'gpu'>;
  rented: Counter<'gpu'>;
  destroyFailed: Counter<'kill_reason'>;
  budgetRefusals: Counter;
  orphansDestroyed: Counter;
}

export function createFleetRegistry(registry = new Registry()): FleetRegistry {
  const registers = [registry];
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter<L>({ name, help, labelNames, registers });
  const r: FleetRegistry = {
    registry,
    stageEntered: counter('fleet_lifecycle_stage_entered_total', 'lifecycles entering each stage', ['stage']),
    outcomes: counter('fleet_lifecycle_outcomes_total', 'lifecycles ended, by outcome and failure type', [
      'outcome',
      'failure_type',
      'gpu',
    ]),
    benchRate: new Histogram({
      name: 'fleet_benchmark_rate_proofs_per_hour',
      help: 'benchmark rate (proofs/h)',
      labelNames: ['gpu'],
      buckets: BENCH_RATE_BUCKETS,
      registers,
    }),
    timeToVerdict: new Histogram({
      name: 'fleet_time_to_verdict_seconds',
      help: 'rent to verdict (s)',
      labelNames: ['outcome'],
      buckets: VERDICT_SECONDS_BUCKETS,
      registers,
    }),
    gpuDollars: counter(
      'fleet_gpu_dollars_total',
      'GPU-$ spent at the billed price, by outcome and phase (killed before_verdict: waste)',
      ['outcome', 'phase', 'gpu'],
    ),
    rented: counter('fleet_instances_rented_total', 'instances rented', ['gpu']),
    destroyFailed: counter(`${E.destroyFailed.name}_total`, E.destroyFailed.help, ['kill_reason']),
    budgetRefusals: counter(`${E.budgetRefusals.name}_total`, E.budgetRefusals.help),
    orphansDestroyed: counter(`${E.orphansDestroyed.name}_total`, E.orphansDestroyed.help),
  };
  // A zero series from the start, so the dashboard and the alert's `unless offset` see 0, not no data.
  r.destroyFailed.inc({}, 0);
  return r;
}

let processRegistry: FleetRegistry | null = null;

/** This process's fleet registry: the sinks of its control workers write it, its /metrics reads it. */
export function fleetRegistry(): FleetRegistry {
  return (processRegistry ??= createFleetRegistry());
}

/** The worker side of the workflows' metrics sink: each call updates the registry (never on replay). */
export function fleetMetricsSinks(r: FleetRegistry = fleetRegistry()): InjectedSinks<FleetMetricsSinks> {
  return {
    fleetMetrics: {
      stageEntered: { fn: (_info, stage) => r.stageEntered.inc({ stage }) },
      outcome: {
        fn: (_info, outcome, failureType, gpu) => r.outcomes.inc({ outcome, failure_type: failureType, gpu }),
      },
      benchRate: { fn: (_info, rate, gpu) => r.benchRate.observe({ gpu }, rate) },
      timeToVerdict: { fn: (_info, seconds, outcome) => r.timeToVerdict.observe({ outcome }, seconds) },
      gpuDollars: { fn: (_info, usd, outcome, phase, gpu) => r.gpuDollars.inc({ outcome, phase, gpu }, usd) },
      rented: {
        fn: (_info, gpu) => {
          r.rented.inc({ gpu });
          // The dollar series this rental can add to exist at 0 from its rent, so increase() counts its
          // verdict's or kill's dollars (a series born with its first value hides that value from increase()).
          r.gpuDollars.inc({ outcome: 'promoted', phase: 'before_verdict', gpu }, 0);
          r.gpuDollars.inc({ outcome: 'killed', phase: 'before_verdict', gpu }, 0);
          r.gpuDollars.inc({ outcome: 'killed', phase: 'production', gpu }, 0);
        },
      },
      destroyFailed: { fn: (_info, killReason) => r.destroyFailed.inc({ kill_reason: killReason }) },
      budgetRefused: { fn: () => r.budgetRefusals.inc() },
      orphanDestroyed: { fn: () => r.orphansDestroyed.inc() },
    },
  };
}
