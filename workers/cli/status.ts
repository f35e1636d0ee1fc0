import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { SA } from '../../workflows/domain/search-attributes.js';
import type { LifecycleStatus } from '../../workflows/domain/types.js';
import { chainStartOf } from './age.js';
import { queryStatus } from './messages.js';
import { costAt, type CostFigures } from '../../workflows/domain/policy/cost.js';
import { type Clock, realRate } from '../../workflows/domain/policy/clock.js';
import { realAgeSec } from './units.js';

export interface LiveStatus extends LifecycleStatus {
  /** Progress the running host activity last heartbeated (proofs done, elapsed), if any. */
  activity: { type: string; attempt: number; heartbeat: unknown } | null;
}

/**
 * The lifecycle's own view (its `status` query) plus the pending activity's last heartbeat, which
 * the workflow cannot see but the server keeps: together they give proofs done and elapsed live.
 */
export async function liveStatus(client: Client, workflowId: string): Promise<LiveStatus> {
  const handle = client.workflow.getHandle(workflowId);
  const [status, desc] = await Promise.all([queryStatus(handle), handle.describe()]);
  return withActivity(status, desc);
}

function withActivity(status: LifecycleStatus, desc: WorkflowExecutionDescription): LiveStatus {
  const pending = desc.raw.pendingActivities?.[0];
  let heartbeat: unknown = null;
  const payload = pending?.heartbeatDetails?.payloads?.[0]?.data;
  if (payload) {
    try {
      heartbeat = JSON.parse(Buffer.from(payload).toString('utf8'));
    } catch {
      heartbeat = null; // an encrypted payload: the CLI shows the workflow's own progress instead
    }
  }
  return {
    ...status,
    activity: pending ? { type: pending.activityType?.name ?? '?', attempt: pending.attempt ?? 1, heartbeat } : null,
  };
}

/** What `status` shows, in real units; also its --json form. */
export interface StatusView {
  workflowId: string;
  execution: string;
  stage: string;
  stageDeadline: string | null;
  stageTimeLeftSec: number | null;
  offerId: number;
  instanceId: number | null;
  machineId: string | null;
  gpu: string | null;
  progress: { completedProofs: number; requestedProofs: number; elapsedSec: number; from: string } | null;
  rateProofsPerHour: number | null;
  rateKind: 'benchmark' | 'so far' | null;
  /** A promoted host's rate over the watch's last window (the benchmark's until one is measured). */
  productionRateProofsPerHour: number | null;
  dollarsPerHour: number | null;
  dollarsPerProof: number | null;
  rentalStartedAt: string;
  rentalAgeSec: number;
  failureType: string | null;
  /** A killed lifecycle's one-line cause, an operator's kill with who gave it and why. */
  cause: string | null;
  /** Cost to date (docs/operating.md): to now while rented, to the destroy after it; null before the rent. */
  cost: CostFigures | null;
  /** A write the lifecycle waits on while our Postgres is down (the host is not at fault). */
  waitingOn: { write: string; since: string; attempts: number; lastError: string } | null;
  pendingActivity: { type: string; attempt: number } | null;
  /** The lifecycle's clock (its input, from its status query): scale 1 is real time. */
  clock: Clock;
}

const ProgressShape = (v: unknown): v is { completed: number; requested: number; elapsedMs: number } =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as Record<string, unknown>).completed === 'number' &&
  typeof (v as Record<string, unknown>).requested === 'number' &&
  typeof (v as Record<string, unknown>).elapsedMs === 'number';

export async function statusView(client: Client, workflowId: string, now = Date.now()): Promise<StatusView> {
  const handle = client.workflow.getHandle(workflowId);
  // The query and the describe at once; the rental's age from the describe (its chain's first run).
  const [status, desc] = await Promise.all([queryStatus(handle), handle.describe()]);
  const live = withActivity(status, desc);
  const sa = desc.typedSearchAttributes;
  // The lifecycle reports in real units; only what the CLI reads off clocks (heartbeats, ages) needs its clock.
  const { clock } = live;
  // One progress figure: the host's live heartbeat while the benchmark runs, else the workflow's own.
  const hb =
    live.activity?.type === 'runBenchmark' && ProgressShape(live.activity.heartbeat) ? live.activity.heartbeat : null;
  const p = hb ?? live.benchmark;
  const progress = p
    ? {
        completedProofs: p.completed,
        requestedProofs: p.requested,
        elapsedSec: hb ? realAgeSec(p.elapsedMs, clock) : Math.round(p.elapsedMs / 1000),
        from: hb ? 'host heartbeat' : 'workflow',
      }
    : null;
  let rate: number | null = null;
  let rateKind: StatusView['rateKind'] = null;
  // The benchmark's rate is BenchRate; a promoted lifecycle's own `rate` moves on with its watch windows.
  const benchRate = sa.get(SA.benchRate) ?? live.rate;
  if (benchRate !== null) {
    rate = benchRate;
    rateKind = 'benchmark';
  } else if (hb && hb.completed > 0 && hb.elapsedMs > 0) {
    rate = realRate((hb.completed * 3_600_000) / hb.elapsedMs, clock);
    rateKind = 'so far';
  }
  const dph = sa.get(SA.dollarsPerHour) ?? null;
  const gpuCount = sa.get(SA.gpuCount) ?? 1;
  const model = sa.get(SA.gpuModel) ?? live.gpuName;
  const start = await chainStartOf(client, desc);
  const deadline = live.stageDeadline ? new Date(live.stageDeadline).getTime() : null;
  const cost = live.costLedger ? costAt(live.costLedger, now) : null;
  return {
    workflowId,
    execution: desc.status.name,
    stage: live.stage,
    stageDeadline: live.stageDeadline,
    stageTimeLeftSec: deadline === null ? null : Math.max(0, realAgeSec(deadline - now, clock)),
    offerId: live.offerId,
    instanceId: live.instanceId,
    machineId: sa.get(SA.machineId) ?? null,
    gpu: model ? `${gpuCount}x ${model}` : null,
    progress,
    rateProofsPerHour: rate === null ? null : Math.round(rate * 10) / 10,
    rateKind,
    productionRateProofsPerHour:
      live.stage === 'promoted' && live.rate !== null ? Math.round(live.rate * 10) / 10 : null,
    dollarsPerHour: dph,
    dollarsPerProof: dph !== null && rate ? dph / rate : null,
    rentalStartedAt: start.toISOString(),
    rentalAgeSec: realAgeSec(now - start.getTime(), clock),
    failureType: live.failureType,
    cause: live.cause,
    cost,
    waitingOn: live.waitingOn
      ? {
          write: live.waitingOn.write,
          since: live.waitingOn.since,
          attempts: live.waitingOn.attempts,
          lastError: live.waitingOn.lastError,
        }
      : null,
    pendingActivity: live.activity ? { type: live.activity.type, attempt: live.activity.attempt } : null,
    clock,
  };
}
