import type { temporal as proto } from '@temporalio/proto';
import { clockOf } from '../../workflows/domain/policy/clock.js';
import type pg from 'pg';
import protoPkg from '@temporalio/proto';
import { compressedLifecycle, startSimStack } from '../dev/sim-stack.js';
import { DEFAULT_TIMEOUTS } from '../../workflows/domain/policy/defaults.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { CONTROL_TASK_QUEUE } from '../../workflows/domain/task-queues.js';
import { farmBooter, spawnHostFarms } from '../sim/farm/client.js';
import { type SimOffer, SimOfferSchema } from '../sim/scenario.js';
import { mapLimit } from '../dev/map-limit.js';
import {
  log,
  pct,
  processCpuSec,
  processTreeCpuSec,
  processRssMiB,
  releaseAll,
  round,
  sleep,
  type Verdict,
  waitForVerdicts,
} from './common.js';

const { temporal } = protoPkg;
type HistoryEvent = proto.api.history.v1.IHistoryEvent;

/**
 * Scale: N concurrent lifecycles through the real dev server, the control worker and the Vast
 * simulator, with the N machines in host-farm processes (`hostsPerFarm` each). Starts are spread over a ramp, as a
 * scaler renting toward a target would; a fixed share of hosts is too slow and gets killed.
 */
export interface ScaleOptions {
  n: number;
  /** SIM_TIME_SCALE for this run. */
  timeScale: number;
  rampSec: number;
  /**
   * Machines per farm process. Every process a GPU-host worker starts forks its farm, so smaller farms
   * fork cheaper, but each adds a Node process and a Temporal runtime: at N = 1000, 100 per farm did
   * no better than 250 (README, Benchmarks).
   */
  hostsPerFarm: number;
  slowShare: number;
  minRate: number;
}

function fleet(n: number, slowShare: number): SimOffer[] {
  const slowEvery = slowShare > 0 ? Math.round(1 / slowShare) : 0;
  return Array.from({ length: n }, (_, i) => {
    const slow = slowEvery > 0 && i % slowEvery === slowEvery - 1;
    return SimOfferSchema.parse({
      id: 90_000_000 + i,
      machine_id: 90_000_000 + i,
      host_id: 1 + (i % 50),
      gpu_name: 'RTX 4090',
      num_gpus: 1,
      gpu_ram: 24564,
      cpu_ram: 257_024,
      dph_total: 0.4,
      sim: {
        host: { proofSec: slow ? 500 : 80, startupSec: 20, paramfetchSec: 60 },
        instance: { loadingSec: 10 },
      },
    });
  });
}

type Timestamp = { seconds?: { toNumber(): number } | number | null; nanos?: number | null } | null | undefined;
const ms = (t: Timestamp) => {
  if (!t) return NaN;
  const sec = typeof t.seconds === 'number' ? t.seconds : (t.seconds?.toNumber() ?? 0);
  return sec * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
};

/** When the benchmark activity ended (completed, or cancelled by the timer) in this history. */
function benchmarkEnd(events: HistoryEvent[]): number | null {
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runBenchmark');
  if (!scheduled?.eventId) return null;
  const id = String(scheduled.eventId);
  const end = events.find(
    (e) =>
      String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? '') === id ||
      String(e.activityTaskCanceledEventAttributes?.scheduledEventId ?? '') === id,
  );
  return end ? ms(end.eventTime) : null;
}

/**
 * Groups wrong verdicts by host kind, outcome, the step the lifecycle was in and the reason recorded,
 * so a run says why (for example which timeout) rather than only how many.
 */
async function explainKills(pool: pg.Pool, ids: string[], kind: (id: string) => string) {
  if (!ids.length) return [];
  const rows = await pool.query<{
    workflow_id: string;
    outcome: string;
    failure_type: string | null;
    reason: string | null;
    stage: string | null;
  }>(
    `SELECT i.workflow_id, i.outcome, i.failure_type, i.reason,
       (SELECT e.stage FROM lifecycle_events e WHERE e.workflow_id = i.workflow_id
          AND e.stage NOT IN ('killing', 'killed') ORDER BY e.seq DESC LIMIT 1) AS stage
     FROM instances i WHERE i.workflow_id = ANY($1)`,
    [ids],
  );
  const groups = new Map<
    string,
    { host: string; verdict: string; stage: string | null; reason: string | null; count: number }
  >();
  for (const r of rows.rows) {
    const g = {
      host: kind(r.workflow_id),
      verdict: r.failure_type ?? r.outcome,
      stage: r.stage,
      // Numbers (ids, seconds) would split one cause into many groups.
      reason: r.reason?.replace(/\d+(\.\d+)?/g, 'N') ?? null,
    };
    const key = JSON.stringify(g);
    const seen = groups.get(key);
    if (seen) seen.count++;
    else groups.set(key, { ...g, count: 1 });
  }
  return [...groups.values()].sort((a, b) => b.count - a.count);
}

export async function scaleBench(o: ScaleOptions) {
  process.env.SIM_TIME_SCALE = String(o.timeScale);
  const offers = fleet(o.n, o.slowShare);
  const slowIds = new Set(offers.filter((of) => of.sim.host.proofSec > 80).map((of) => of.id));
  // Heartbeats guard the link from a host to the server, whose latency does not shrink with simulated
  // time: keep production's 60 s timeout and 20 s between heartbeats while the job's durations are compressed.
  const lifecycle = compressedLifecycle(o.timeScale);
  lifecycle.timeouts.heartbeatSec = DEFAULT_TIMEOUTS.heartbeatSec;
  const farms = await spawnHostFarms(Math.max(1, Math.ceil(o.n / o.hostsPerFarm)), {
    SIM_TIME_SCALE: String(o.timeScale),
    SIM_HEARTBEAT_THROTTLE_SEC: String(DEFAULT_TIMEOUTS.heartbeatSec / 3),
  });
  const farmPids = farms.map((f) => f.child.pid ?? null);
  const sum = (xs: Array<number | null>) =>
    xs.some((x) => x === null) ? null : xs.reduce<number>((a, x) => a + x!, 0);
  const farmCpu = () => sum(farmPids.map(processTreeCpuSec));
  const farmRss = () => sum(farmPids.map(processRssMiB));
  const stack = await startSimStack(offers, { headless: true }, log, {
    bootHost: farmBooter(farms.map((f) => f.url)),
  });
  const tag = `scale${o.n}-${Date.now().toString(36)}`;
  const ids = offers.map((of) => `${tag}-${of.id}`);
  const startedAt = new Map<string, number>();
  const decided = new Map<string, Verdict>();
  const cpu0 = {
    control: process.cpuUsage(),
    farm: farmCpu(),
    temporal: processCpuSec(stack.temporal.pid),
  };
  const peak = { control: 0, farm: 0, temporal: 0, open: 0 };
  const sampler = setInterval(() => {
    peak.control = Math.max(peak.control, Math.round(process.memoryUsage().rss / 2 ** 20));
    peak.farm = Math.max(peak.farm, farmRss() ?? 0);
    peak.temporal = Math.max(peak.temporal, processRssMiB(stack.temporal.pid) ?? 0);
    peak.open = Math.max(peak.open, startedAt.size - decided.size);
  }, 1000);
  const t0 = Date.now();
  try {
    const starting = offers.map(async (offer, i) => {
      await sleep((i * o.rampSec * 1000) / o.n);
      await stack.client.workflow.start(instanceLifecycle, {
        taskQueue: CONTROL_TASK_QUEUE,
        workflowId: ids[i]!,
        args: [
          {
            offerId: offer.id,
            minRate: o.minRate,
            earlyStopAfterProofs: 3,
            ...lifecycle,
            clock: clockOf(o.timeScale),
          },
        ],
      });
      startedAt.set(ids[i]!, Date.now());
    });
    let lastLog = 0;
    await waitForVerdicts(stack.pool, tag, o.n, t0 + (o.rampSec + 3000 * o.timeScale + 600) * 1000, decided, () => {
      if (Date.now() - lastLog > 15_000 || decided.size === o.n) {
        lastLog = Date.now();
        log(`n=${o.n}: ${startedAt.size} started, ${decided.size} decided`);
      }
    });
    await Promise.all(starting);
    const wallSec = (Date.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0.control);
    const cpuOf = (now: number | null, then: number | null) =>
      now !== null && then !== null ? round(now - then, 1) : null;
    const cpuSec = {
      control: round((cpu.user + cpu.system) / 1e6, 1),
      farm: cpuOf(farmCpu(), cpu0.farm),
      temporal: cpuOf(processCpuSec(stack.temporal.pid), cpu0.temporal),
    };
    clearInterval(sampler);

    // Promoted machines keep proving: hand them back (their lifecycles destroy them) before measuring.
    const leftRunning = await releaseAll(
      stack,
      ids.filter((id) => decided.get(id)?.outcome === 'promoted'),
      300_000,
    );

    const perLifecycle = await mapLimit(ids, 8, async (id) => {
      const history = await stack.client.workflow.getHandle(id).fetchHistory();
      const events = history.events ?? [];
      const end = benchmarkEnd(events);
      const verdict = decided.get(id)?.at.getTime();
      // A promoted lifecycle goes on watching; count its history up to promotion (production start).
      const promotedAt = events.findIndex(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'startProduction',
      );
      const upTo =
        decided.get(id)?.outcome === 'promoted' && promotedAt >= 0 ? events.slice(0, promotedAt + 1) : events;
      return {
        killed: decided.get(id)?.outcome === 'killed',
        latencyMs: end !== null && verdict !== undefined ? verdict - end : null,
        events: upTo.length,
        bytes: temporal.api.history.v1.History.encode({ events: upTo }).finish().length,
      };
    });
    const lat = perLifecycle
      .map((l) => l.latencyMs)
      .filter((x): x is number => x !== null)
      .sort((a, b) => a - b);
    const killed = perLifecycle.filter((l) => l.killed);
    const mean = (xs: number[]) => (xs.length ? round(xs.reduce((a, b) => a + b, 0) / xs.length, 1) : null);
    const failureTypes: Record<string, number> = {};
    for (const d of decided.values()) {
      const k = d.failure_type ?? d.outcome;
      failureTypes[k] = (failureTypes[k] ?? 0) + 1;
    }
    // Healthy hosts should be promoted and slow ones killed for their rate; anything else is a wrong verdict.
    const expected = (id: string) => (slowIds.has(Number(id.slice(tag.length + 1))) ? 'BenchRateBelowMin' : 'promoted');
    const wrong = [...decided].filter(([id, d]) => (d.failure_type ?? d.outcome) !== expected(id));
    const wrongVerdicts = await explainKills(
      stack.pool,
      wrong.map(([id]) => id),
      (id) => (slowIds.has(Number(id.slice(tag.length + 1))) ? 'slow' : 'healthy'),
    );
    return {
      n: o.n,
      farmProcesses: farms.length,
      hostsPerFarm: o.hostsPerFarm,
      timeScale: o.timeScale,
      rampSec: o.rampSec,
      decided: decided.size,
      outcomes: failureTypes,
      wrongVerdicts,
      // Host steps handed out but never started, run once more on a host that answered the probe.
      redeliveredSteps: Number(
        (
          await stack.pool.query<{ n: string }>(
            `SELECT count(*) AS n FROM lifecycle_events WHERE workflow_id LIKE $1 AND message LIKE '%never started%'`,
            [`${tag}-%`],
          )
        ).rows[0]?.n ?? 0,
      ),
      peakOpenLifecycles: peak.open,
      wallSec: round(wallSec, 1),
      lifecyclesPerSec: round(decided.size / wallSec, 2),
      decisionLatencyMs: { p50: pct(lat, 0.5), p99: pct(lat, 0.99), max: lat.length ? lat[lat.length - 1]! : null },
      historyEvents: {
        killedMean: mean(killed.map((l) => l.events)),
        killedMax: killed.length ? Math.max(...killed.map((l) => l.events)) : null,
        atPromotionMean: mean(perLifecycle.filter((l) => !l.killed).map((l) => l.events)),
      },
      historyKiBMean: round((mean(perLifecycle.map((l) => l.bytes)) ?? 0) / 1024, 1),
      cpuSec,
      cpuSecPerLifecycle: round(
        ((cpuSec.control ?? 0) + (cpuSec.farm ?? 0) + (cpuSec.temporal ?? 0)) / Math.max(1, decided.size),
        2,
      ),
      peakRssMiB: { control: peak.control, farm: peak.farm, temporal: peak.temporal },
      instancesLeftRunning: leftRunning,
      rentedTwice: stack.vast.ledger().length - new Set(stack.vast.ledger().map((i) => i.offerId)).size,
    };
  } finally {
    clearInterval(sampler);
    await stack.close();
    await Promise.all(farms.map((f) => f.stop()));
  }
}
