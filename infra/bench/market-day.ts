import type pg from 'pg';
import { type Clock, clockOf } from '../../workflows/domain/policy/clock.js';
import { listBadMachineIds } from '../../activities/store/queries.js';
import { compressedLifecycle, type SimStack, startSimStack } from '../dev/sim-stack.js';
import { ensureReconcilerSchedule, ensureScalerSchedule } from '../../workers/setup/schedules.js';
import type { FleetScalerInput } from '../../workflows/fleet-scaler.js';
import { offerQuery } from '../../workflows/domain/policy/offer-filter.js';
import { MARKET_FILTER } from './market-filter.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { CONTROL_TASK_QUEUE } from '../../workflows/domain/task-queues.js';
import { DEFAULT_TIMEOUTS } from '../../workflows/domain/policy/defaults.js';
import { farmBooter, spawnHostFarm } from '../sim/farm/client.js';
import { log, releaseAll, sleep } from './common.js';
import type { MarketOffer } from './market.js';
import { MARKET_PARAMS } from './market-params.js';
import { type OldLive, type OldOffer, oldPolicyChoice } from './old-policy.js';

export type RunPolicy = 'old' | 'ours';

/** Wall seconds the scaler watches new lifecycles for a taken offer, on the real stack. */
export const STACK_OFFER_CHECK_SEC = 5;

/** One rental as the day ended: what the simulator billed and what the store recorded. */
export interface Rental {
  offerId: number;
  instanceId: number;
  /** Wall-clock ms (compressed); null if it never ran. */
  runningAt: number | null;
  endAt: number;
  priceRaisedAt: number | null;
  outcome: 'promoted' | 'killed' | null;
  failureType: string | null;
  promotedAt: number | null;
  /** When the lifecycle entered paramfetch and its timed benchmark (wall ms), where it got there. */
  paramfetchAt?: number | null;
  benchmarkAt?: number | null;
}

export interface DayRun {
  policy: RunPolicy;
  t0: number;
  end: number;
  rentals: Rental[];
  /** Instances still up after every lifecycle was cancelled at the end of the day (orphans). */
  leftRunning: number;
  rentedTwice: number;
}

const F = MARKET_PARAMS.fleet;

/**
 * One policy through one simulated day on the real stack (dev server, control worker, Postgres, Vast
 * simulator, host farm): the market lists and takes offers and raises prices on its clock while the
 * policy rents. `ours` is the product's scaler schedule; `old` is the seeds' manager driven from here.
 */
export async function runMarketDay(
  policy: RunPolicy,
  market: MarketOffer[],
  o: { hours: number; timeScale: number },
): Promise<DayRun> {
  const scale = o.timeScale;
  process.env.SIM_TIME_SCALE = String(scale);
  // The simulator's key for this run; it stands in for VAST_API_KEY and is never a real one.
  process.env.VAST_API_KEY = `sim-market-${Math.random().toString(36).slice(2)}`;
  // The simulators' durations and clock: each lifecycle converts what it measures to real units itself.
  const lifecycle = { ...compressedLifecycle(scale), clock: clockOf(scale) };
  // Production heartbeat timing (the scale bench's lesson): the host-server link does not compress.
  lifecycle.timeouts.heartbeatSec = DEFAULT_TIMEOUTS.heartbeatSec;
  const farm = await spawnHostFarm({
    SIM_TIME_SCALE: String(scale),
    SIM_HEARTBEAT_THROTTLE_SEC: String(DEFAULT_TIMEOUTS.heartbeatSec / 3),
  });
  const listed = new Set(market.filter((m) => m.listedAtH === 0).map((m) => m.offer.id));
  const stack = await startSimStack(
    market.filter((m) => listed.has(m.offer.id)).map((m) => m.offer),
    { headless: true },
    log,
    { bootHost: farmBooter([farm.url]) },
  );
  const byId = new Map(market.map((m) => [m.offer.id, m]));
  const takenByOthers = new Set<number>();
  const raisedAt = new Map<number, number>();
  const t0 = Date.now();
  const simH = (at: number) => (at - t0) / 1000 / scale / 3600;
  const admin = (path: string, body: unknown) =>
    fetch(stack.vast.url + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  let driving = true;
  const marketLoop = (async () => {
    while (driving) {
      const now = Date.now();
      const h = simH(now);
      const ours = new Set(
        stack.vast
          .ledger()
          .filter((i) => !i.destroyed)
          .map((i) => i.offerId),
      );
      for (const m of market) {
        const id = m.offer.id;
        if (!listed.has(id) && m.listedAtH <= h) {
          listed.add(id);
          await admin('/_sim/offers', m.offer);
        }
        if (listed.has(id) && !takenByOthers.has(id) && m.takenAtH <= h && !ours.has(id)) {
          takenByOthers.add(id);
          await admin(`/_sim/offers/${id}/take`, {});
        }
      }
      for (const i of stack.vast.ledger()) {
        const m = byId.get(i.offerId);
        if (!m || i.destroyed || i.runningAt === null || m.priceRiseAtH === null || raisedAt.has(i.id)) continue;
        if (now >= i.runningAt + m.priceRiseAtH * 3600_000 * scale) {
          raisedAt.set(i.id, now);
          await admin(`/_sim/instances/${i.id}/price`, { dph: m.billedDph * 1.3 });
        }
      }
      await sleep(1000);
    }
  })();

  const intervalSec = Math.max(5, 300 * scale);
  const started: OldRental[] = [];
  const tag = `market-${policy}-${Date.now().toString(36)}`;
  let stopPolicy: () => Promise<void>;
  if (policy === 'ours') {
    const input: FleetScalerInput = {
      // Real proofs/h: the lifecycles run on the simulators' clock and report in real units.
      targetRate: F.targetRate.value,
      maxDph: F.maxDph.value,
      maxInstances: F.maxInstances.value,
      maxConcurrentBenchmarks: F.maxConcurrentBenchmarks.value,
      explorationSlots: F.explorationSlots.value,
      minRate: F.minRate.value,
      offerCheckSec: STACK_OFFER_CHECK_SEC,
      filter: MARKET_FILTER,
      lifecycle: { ...lifecycle, diskGb: F.diskGb.value },
    };
    await ensureScalerSchedule(stack.client, { scheduleId: `${tag}-scaler`, intervalSec, input });
    // As a deployment does: the reconciler destroys any instance whose lifecycle is gone.
    await ensureReconcilerSchedule(stack.client, {
      scheduleId: `${tag}-reconciler`,
      intervalSec: Math.max(5, 600 * scale),
    });
    await stack.client.schedule.getHandle(`${tag}-scaler`).trigger();
    stopPolicy = async () => {
      for (const s of ['scaler', 'reconciler'])
        await stack.client.schedule
          .getHandle(`${tag}-${s}`)
          .delete()
          .catch(() => undefined);
    };
  } else {
    let k = 0;
    const loop = (async () => {
      while (driving) {
        await oldPolicyTick(stack, started, () => `${tag}-${k++}`, lifecycle).catch((err: unknown) =>
          log(`market old policy: ${err instanceof Error ? err.message : String(err)}`),
        );
        const until = Date.now() + intervalSec * 1000;
        while (driving && Date.now() < until) await sleep(500);
      }
    })();
    stopPolicy = async () => {
      driving = false;
      await loop;
    };
  }

  try {
    const dayEnd = t0 + o.hours * 3600_000 * scale;
    let lastLog = 0;
    while (Date.now() < dayEnd) {
      await sleep(1000);
      if (Date.now() - lastLog > 60_000) {
        lastLog = Date.now();
        const l = stack.vast.ledger();
        log(
          `market ${policy}: ${simH(Date.now()).toFixed(2)} h of ${o.hours}; ${l.length} rented, ${l.filter((i) => !i.destroyed).length} up`,
        );
      }
    }
    await stopPolicy();
    driving = false;
    await marketLoop;
    const end = Date.now();
    const rentals = await readRentals(stack, end, raisedAt);
    // Hand back whatever is still up: every lifecycle this run knows of (its instance goes with it).
    const ids = (
      await stack.pool.query<{ workflow_id: string }>('SELECT DISTINCT workflow_id FROM instances')
    ).rows.map((r) => r.workflow_id);
    const leftRunning = await releaseAll(stack, [...new Set([...ids, ...started.map((s) => s.id)])], 120_000);
    const ledger = stack.vast.ledger();
    return {
      policy,
      t0,
      end,
      rentals,
      leftRunning,
      rentedTwice: ledger.length - new Set(ledger.map((i) => i.offerId)).size,
    };
  } finally {
    driving = false;
    await stack.close();
    await farm.stop();
  }
}

interface OldRental {
  id: string;
  offerId: number;
  machineId: number;
  /** $/h as the search showed it (8 GiB): what the seeds' manager budgeted. */
  searchedDph: number;
}

/**
 * The seeds' manager, one round: the cheapest offers passing the filters at the searched (8 GiB) price,
 * skipping machines marked bad; in-flight hosts count as the minimum rate, promoted ones as benchmarked;
 * the budget is counted at the searched price. Full 12-proof batch, one 45-minute timer, no early stop.
 */
async function oldPolicyTick(
  stack: SimStack,
  started: OldRental[],
  nextId: () => string,
  lifecycle: ReturnType<typeof compressedLifecycle> & { clock: Clock },
): Promise<void> {
  const rows = await stack.pool.query<{
    workflow_id: string;
    outcome: string | null;
    bench_rate: number | null;
    destroyed_at: Date | null;
  }>('SELECT workflow_id, outcome, bench_rate, destroyed_at FROM instances WHERE workflow_id = ANY($1)', [
    started.map((s) => s.id),
  ]);
  const known = new Map(rows.rows.map((r) => [r.workflow_id, r]));
  // A lifecycle that ended before the store heard of it (its offer was taken) holds nothing.
  const closed = new Set<string>();
  for (const s of started.filter((x) => !known.has(x.id))) {
    const d = await stack.client.workflow.getHandle(s.id).describe();
    if (d.status.name !== 'RUNNING') closed.add(s.id);
  }
  const live = started.filter((s) => {
    const r = known.get(s.id);
    return r ? r.destroyed_at === null && r.outcome !== 'killed' : !closed.has(s.id);
  });
  const held: OldLive[] = live.map((s) => {
    const r = known.get(s.id);
    return {
      machineId: s.machineId,
      searchedDph: s.searchedDph,
      ...(r?.outcome === 'promoted' ? { promotedRate: r.bench_rate ?? 0 } : {}),
    };
  });
  const bad = new Set(await listBadMachineIds(stack.pool));
  // The searched price: no allocated_storage, so Vast prices 8 GiB, as the seeds' manager searched.
  const { allocated_storage: _disk, ...query } = offerQuery(MARKET_FILTER, F.diskGb.value);
  const res = await fetch(`${stack.vast.url}/api/v0/bundles/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${process.env.VAST_API_KEY}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(query),
  });
  if (!res.ok) throw new Error(`offer search: HTTP ${res.status}`);
  const offers = ((await res.json()) as { offers: OldOffer[] }).offers;
  const choice = oldPolicyChoice(held, offers, bad, {
    minRate: F.minRate.value,
    targetRate: F.targetRate.value,
  });
  for (const x of choice) {
    const id = nextId();
    await stack.client.workflow.start(instanceLifecycle, {
      taskQueue: CONTROL_TASK_QUEUE,
      workflowId: id,
      args: [
        {
          offerId: x.id,
          minRate: F.minRate.value,
          earlyStopAfterProofs: 0,
          benchmarkProofs: 12,
          diskGb: F.diskGb.value,
          ...lifecycle,
        },
      ],
    });
    started.push({ id, offerId: x.id, machineId: x.machine_id, searchedDph: x.dph_total });
  }
}

/** Every instance the simulator created, joined with the store's record of its rental. */
async function readRentals(stack: SimStack, end: number, raisedAt: Map<number, number>): Promise<Rental[]> {
  const rows = await storeRows(stack.pool);
  const byInstance = new Map(rows.map((r) => [Number(r.instance_id), r]));
  return stack.vast.ledger().map((i) => {
    const r = byInstance.get(i.id);
    return {
      offerId: i.offerId,
      instanceId: i.id,
      runningAt: i.runningAt,
      endAt: Math.min(i.destroyedAt ?? end, end),
      priceRaisedAt: raisedAt.get(i.id) ?? null,
      outcome: (r?.outcome as Rental['outcome']) ?? null,
      failureType: r?.failure_type ?? null,
      promotedAt: r?.promoted_at ? r.promoted_at.getTime() : null,
      paramfetchAt: r?.paramfetch_at ? r.paramfetch_at.getTime() : null,
      benchmarkAt: r?.benchmark_at ? r.benchmark_at.getTime() : null,
    };
  });
}

function storeRows(pool: pg.Pool) {
  return pool
    .query<{
      instance_id: string | null;
      outcome: string | null;
      failure_type: string | null;
      destroyed_at: Date | null;
      promoted_at: Date | null;
      paramfetch_at: Date | null;
      benchmark_at: Date | null;
    }>(
      `SELECT i.instance_id, i.outcome, i.failure_type, i.destroyed_at,
         (SELECT min(e.recorded_at) FROM lifecycle_events e WHERE e.rental_key = i.rental_key AND e.stage = 'promoted') AS promoted_at,
         (SELECT min(e.recorded_at) FROM lifecycle_events e WHERE e.rental_key = i.rental_key AND e.stage = 'paramfetch') AS paramfetch_at,
         (SELECT min(e.recorded_at) FROM lifecycle_events e WHERE e.rental_key = i.rental_key AND e.stage = 'benchmark') AS benchmark_at
       FROM instances i WHERE i.instance_id IS NOT NULL`,
    )
    .then((r) => r.rows);
}
