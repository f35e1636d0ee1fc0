import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { expect } from 'vitest';
import type { VastSim } from '../../infra/sim/vast/server.js';
import { type LiveStatus, liveStatus } from '../../workers/cli/status.js';
import { instanceLabel, rentalKey } from '../../workflows/domain/task-queues.js';
import { hostProcesses } from './host-processes.js';
import { pollUntil } from '../../infra/dev/poll.js';

/** FAULT_SEED picks where each fault lands; the default keeps CI runs identical, a failing seed replays. */
export function faultSeed(): number {
  const raw = process.env.FAULT_SEED ?? '6';
  const seed = Number(raw);
  if (!Number.isInteger(seed)) throw new Error(`FAULT_SEED must be an integer, got ${raw}`);
  return seed;
}

/** A repeatable integer in [min, max] for one named decision under one seed (mulberry32 on seed ^ hash). */
export function seededInt(seed: number, decision: string, min: number, max: number): number {
  let h = seed >>> 0;
  for (const ch of decision) h = Math.imul(h ^ ch.charCodeAt(0), 0x9e3779b1) >>> 0;
  let t = (h + 0x6d2b79f5) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  const r = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  return min + Math.floor(r * (max - min + 1));
}

/** The awaited state can no longer come: stop polling at once. */
export class FatalProbe extends Error {}

/**
 * Waits until the lifecycle is in `benchmark` with its batch proving on the host and at least
 * `minCompleted` but not all of its proofs done, so a fault injected now lands mid-batch. Progress is
 * read from the host's daemon log (what the daemon itself says it accepted and completed), not from
 * heartbeats, which the host throttles. A lifecycle that gets past the batch first fails the wait at once.
 */
export async function waitForBenchmarkRunning(
  client: Client,
  workflowId: string,
  timeoutMs: number,
  minCompleted = 0,
): Promise<{ live: LiveStatus; instanceId: number; accepted: number; completed: number }> {
  return pollUntil(
    `${workflowId} proving its benchmark batch (${minCompleted}+ proofs done)`,
    async () => {
      const live = await liveStatus(client, workflowId);
      if (['evaluating', 'promoted', 'killing', 'killed'].includes(live.stage)) {
        throw new FatalProbe(
          `${workflowId} got past the benchmark before the fault (${live.stage}, ${live.failureType})`,
        );
      }
      const requested = live.benchmark?.requested;
      if (live.stage !== 'benchmark' || live.activity?.type !== 'runBenchmark' || !requested || !live.instanceId) {
        return undefined;
      }
      const workDir = hostProcesses(live.instanceId)[0]?.workDir;
      if (!workDir) return undefined;
      const { accepted, completed } = benchProofs(workDir, workflowId);
      return accepted > 0 && completed >= minCompleted && completed < requested
        ? { live, instanceId: live.instanceId, accepted, completed }
        : undefined;
    },
    { timeoutMs, intervalMs: 150, isFatal: (err) => err instanceof FatalProbe },
  );
}

/** Benchmark proofs of this lifecycle the host's daemon has accepted and completed, from its log. */
export function benchProofs(workDir: string, workflowId: string): { accepted: number; completed: number } {
  let log = '';
  try {
    log = readFileSync(path.join(workDir, 'cuzk-daemon.log'), 'utf8');
  } catch {
    return { accepted: 0, completed: 0 };
  }
  const count = (what: string) => log.split(`job ${what} job_id=${workflowId}/bench/`).length - 1;
  return { accepted: count('accepted'), completed: count('completed') };
}

/** When the activity of this type last completed, per the workflow's history (null if it never did). */
export async function activityCompletedAt(
  client: Client,
  workflowId: string,
  activityType: string,
): Promise<Date | null> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const scheduled = new Map<string, string>();
  let at: Date | null = null;
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s && e.eventId) scheduled.set(String(e.eventId), s.activityType?.name ?? '');
    const c = e.activityTaskCompletedEventAttributes;
    if (c && scheduled.get(String(c.scheduledEventId)) === activityType) at = eventTime(e.eventTime);
  }
  return at;
}

/** Identities of the workers that completed workflow tasks at or after `since`. */
export async function workflowTaskWorkersSince(
  client: Client,
  workflowId: string,
  since: number,
): Promise<Set<string>> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const ids = new Set<string>();
  for (const e of events) {
    const done = e.workflowTaskCompletedEventAttributes;
    if (done && eventTime(e.eventTime).getTime() >= since) ids.add(done.identity ?? '');
  }
  return ids;
}

function eventTime(t: { seconds?: unknown; nanos?: number | null } | null | undefined): Date {
  const seconds = Number(t?.seconds ?? 0);
  return new Date(seconds * 1000 + Math.floor((t?.nanos ?? 0) / 1e6));
}

/**
 * Each lifecycle rented exactly one instance, and every instance still up at Vast belongs to a
 * lifecycle that is still running (promoted and watching it): nothing bills without an owner.
 */
export async function expectOneRentEachAndNoneUnowned(
  client: Client,
  sim: VastSim,
  workflowIds: string[],
): Promise<void> {
  const ledger = sim.ledger();
  const labels = await Promise.all(workflowIds.map(async (id) => [await rentalLabel(client, id), id] as const));
  const owner = new Map(labels);
  for (const [label, id] of labels) {
    expect(ledger.filter((r) => r.label === label).length, `instances rented for ${id}`).toBe(1);
  }
  for (const r of ledger.filter((row) => !row.destroyed)) {
    const id = owner.get(r.label);
    expect(id, `instance ${r.id} (${r.label}) belongs to one of our lifecycles`).toBeDefined();
    const desc = await client.workflow.getHandle(id ?? '').describe();
    expect(desc.status.name, `owner of running instance ${r.id}`).toBe('RUNNING');
  }
}

/** The Vast label of the latest rental of a lifecycle's workflow id (its first run's id is the rental's). */
export async function rentalLabel(client: Client, workflowId: string): Promise<string> {
  const desc = await client.workflow.getHandle(workflowId).describe();
  const firstRunId = desc.raw.workflowExecutionInfo?.firstRunId;
  if (!firstRunId) throw new Error(`${workflowId}: the server did not say which run started this rental`);
  return instanceLabel(rentalKey(workflowId, firstRunId));
}
