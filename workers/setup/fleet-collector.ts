import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { Counter, Gauge, type Metric, type Registry } from 'prom-client';
import { z } from 'zod';
import { fleetRegistry } from './metrics-registry.js';
import { SCALER_SCHEDULE_ID } from './schedules.js';

/**
 * Fleet totals read from the store (and the scaler's schedule) on a cadence and exported as metrics.
 * The store, not this process, holds them, so they survive worker restarts: spend is each ended rental's
 * cost as its lifecycle counted it, and billed $/h over the real time rented for the rest (an undestroyed
 * instance keeps accruing).
 * Every control worker exports the same values; dashboards and alerts aggregate with max().
 */
export interface FleetSnapshot {
  /** $ spent since the first rent: billed $/h x hours rented, per instance. */
  spendUsd: number;
  /** $/h billed right now by instances not yet destroyed. */
  spendUsdPerHour: number;
  /** Sum of the benchmark rates of promoted, live instances (proofs/h). */
  rateProofsPerHour: number;
  /**
   * Not-destroyed instances by where their lifecycle is: `starting` (rented, before the benchmark:
   * waiting to run, fitness, paramfetch, warmup), `benchmarking` (benchmark and its verdict), `promoted`,
   * `killing` (its kill under way), `undestroyed_kill` (killed, destroy failed: billing).
   */
  instances: { starting: number; benchmarking: number; promoted: number; killing: number; undestroyed_kill: number };
}

export async function readFleet(pool: pg.Pool | pg.PoolClient): Promise<FleetSnapshot> {
  const { rows } = await pool.query<{
    spend_usd: number | null;
    spend_usd_per_hour: number | null;
    rate: number | null;
    starting: string;
    benchmarking: string;
    promoted: string;
    killing: string;
    undestroyed_kill: string;
  }>(`SELECT
        -- An ended rental's cost as its lifecycle counted it; else billed $/h x hours since the rent.
        SUM(CASE WHEN cost_usd IS NOT NULL AND (destroyed_at IS NOT NULL OR outcome = 'killed') THEN cost_usd
                 ELSE dph_total * EXTRACT(EPOCH FROM (COALESCE(destroyed_at, now()) - rented_at)) / 3600
            END)::float8 AS spend_usd,
        SUM(dph_total) FILTER (WHERE destroyed_at IS NULL)::float8 AS spend_usd_per_hour,
        SUM(bench_rate) FILTER (WHERE destroyed_at IS NULL AND outcome = 'promoted')::float8 AS rate,
        COUNT(*) FILTER (WHERE destroyed_at IS NULL AND outcome IS NULL
                           AND stage NOT IN ('benchmark', 'evaluating', 'killing', 'killed')) AS starting,
        COUNT(*) FILTER (WHERE destroyed_at IS NULL AND outcome IS NULL
                           AND stage IN ('benchmark', 'evaluating')) AS benchmarking,
        COUNT(*) FILTER (WHERE destroyed_at IS NULL AND outcome IS NULL AND stage IN ('killing', 'killed')) AS killing,
        COUNT(*) FILTER (WHERE destroyed_at IS NULL AND outcome = 'promoted') AS promoted,
        COUNT(*) FILTER (WHERE destroyed_at IS NULL AND outcome = 'killed') AS undestroyed_kill
      FROM instances WHERE instance_id IS NOT NULL AND dph_total IS NOT NULL`);
  const r = rows[0];
  return {
    spendUsd: r?.spend_usd ?? 0,
    spendUsdPerHour: r?.spend_usd_per_hour ?? 0,
    rateProofsPerHour: r?.rate ?? 0,
    instances: {
      starting: Number(r?.starting ?? 0),
      benchmarking: Number(r?.benchmarking ?? 0),
      promoted: Number(r?.promoted ?? 0),
      killing: Number(r?.killing ?? 0),
      undestroyed_kill: Number(r?.undestroyed_kill ?? 0),
    },
  };
}

const ScalerArgs = z.tuple([z.object({ targetRate: z.number(), maxDph: z.number() }).loose()]);

/** The target and budget the scaler's schedule runs with; null when there is no schedule. */
export async function readTarget(
  client: Client,
  scheduleId: string,
): Promise<{ targetRate: number; maxDph: number } | null> {
  try {
    const desc = await client.schedule.getHandle(scheduleId).describe();
    if (desc.action.type !== 'startWorkflow') return null;
    const args = ScalerArgs.safeParse(desc.action.args);
    return args.success ? { targetRate: args.data[0].targetRate, maxDph: args.data[0].maxDph } : null;
  } catch {
    return null;
  }
}

export interface FleetCollector {
  /** One read and export now (the loop does this every interval). */
  collect(): Promise<void>;
  stop(): void;
}

/** The collector's families: not in the registry until the store is first read, so a fresh worker exports no false 0. */
function collectorFamilies(names: Map<Metric, string>) {
  const named = <M extends Metric>(name: string, m: M): M => (names.set(m, name), m);
  const g = (name: string, help: string, labelNames: string[] = []) =>
    named(name, new Gauge({ name, help, labelNames, registers: [] }));
  return {
    // The store's total: it survives restarts, so a restarted worker resumes the count where it was.
    spend: named(
      'fleet_spend_usd_total',
      new Counter({
        name: 'fleet_spend_usd_total',
        help: '$ spent on rented instances since the first rent (from the store)',
        registers: [],
      }),
    ),
    dph: g('fleet_spend_usd_per_hour', '$/h billed now by instances not destroyed'),
    rate: g('fleet_rate_proofs_per_hour', 'sum of benchmark rates of promoted instances (proofs/h)'),
    instances: g('fleet_instances', 'instances rented and not destroyed, by state', ['state']),
    target: g('fleet_target_rate_proofs_per_hour', "the scaler's target rate (proofs/h)"),
    budget: g('fleet_budget_usd_per_hour', "the scaler's $/h budget"),
    up: g('fleet_collector_last_success_timestamp_seconds', 'when the store was last read'),
  };
}

export function startFleetCollector(opts: {
  pool: pg.Pool;
  client: Client;
  intervalMs?: number;
  scheduleId?: string;
  /** Where the families go (default: this process's fleet registry, which its /metrics serves). */
  registry?: Registry;
  onError?: (err: unknown) => void;
}): FleetCollector {
  const registry = opts.registry ?? fleetRegistry().registry;
  const names = new Map<Metric, string>();
  const f = collectorFamilies(names);
  const shown = new Set<Metric>();
  const showOnce = (m: Metric) => {
    if (shown.has(m)) return;
    // A collector started again in this process takes the families over.
    registry.removeSingleMetric(names.get(m) ?? '');
    registry.registerMetric(m);
    shown.add(m);
  };
  let counted: number | null = null;

  async function collect(): Promise<void> {
    const [s, t] = await Promise.all([
      readFleet(opts.pool),
      readTarget(opts.client, opts.scheduleId ?? SCALER_SCHEDULE_ID),
    ]);
    // A counter never goes down: a store total read lower (a rental's cost recounted) adds nothing.
    f.spend.inc(Math.max(0, s.spendUsd - (counted ?? 0)));
    counted = Math.max(counted ?? 0, s.spendUsd);
    f.dph.set(s.spendUsdPerHour);
    f.rate.set(s.rateProofsPerHour);
    for (const [state, n] of Object.entries(s.instances)) f.instances.set({ state }, n);
    for (const m of [f.spend, f.dph, f.rate, f.instances]) showOnce(m);
    if (t) {
      f.target.set(t.targetRate);
      f.budget.set(t.maxDph);
      showOnce(f.target);
      showOnce(f.budget);
    }
    f.up.set(Date.now() / 1000);
    showOnce(f.up);
  }

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const loop = () => {
    collect()
      .catch((err: unknown) => opts.onError?.(err))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, opts.intervalMs ?? 15_000);
      });
  };
  loop();
  return {
    collect,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
