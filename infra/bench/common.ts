import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import type { SimStack } from '../dev/sim-stack.js';
import { mapLimit } from '../dev/map-limit.js';

/** Where every bench writes its result files (and a long run its partial ones): beside the bench. */
export const RESULTS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');

export const log = (m: string) => console.error(`[bench] ${m}`);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Verdict {
  outcome: string;
  failure_type: string | null;
  /** When the store received the verdict (`promoted` or `killing` event). */
  at: Date;
}

/**
 * Polls the store once a second until `expected` lifecycles tagged `tag` have a verdict or the deadline
 * passes: one query for all, instead of a poller per lifecycle loading the server being measured. The
 * first outcome seen is kept (a promoted host may be killed later by its watch). Fills `into`.
 */
export async function waitForVerdicts(
  pool: pg.Pool,
  tag: string,
  expected: number,
  deadline: number,
  into: Map<string, Verdict>,
  onPoll: () => void = () => undefined,
): Promise<void> {
  while (into.size < expected && Date.now() < deadline) {
    await sleep(1000);
    const rows = await pool.query<Verdict & { workflow_id: string }>(
      `SELECT i.workflow_id, i.outcome, i.failure_type, min(e.recorded_at) AS at FROM instances i
       JOIN lifecycle_events e ON e.workflow_id = i.workflow_id AND e.stage IN ('promoted', 'killing')
       WHERE i.workflow_id LIKE $1 AND i.outcome IS NOT NULL
       GROUP BY i.workflow_id, i.outcome, i.failure_type`,
      [`${tag}-%`],
    );
    for (const r of rows.rows) if (!into.has(r.workflow_id)) into.set(r.workflow_id, r);
    onPoll();
  }
}

/** Cancels the lifecycles (each destroys its instance) and waits until the simulator has none running. */
export async function releaseAll(stack: SimStack, workflowIds: string[], timeoutMs: number): Promise<number> {
  await mapLimit(workflowIds, 20, (id) =>
    stack.client.workflow
      .getHandle(id)
      .cancel()
      .catch(() => undefined),
  );
  const deadline = Date.now() + timeoutMs;
  while (stack.vast.ledger().some((r) => !r.destroyed) && Date.now() < deadline) await sleep(500);
  return stack.vast.ledger().filter((r) => !r.destroyed).length;
}
export const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;
export const pct = (sorted: number[], p: number) =>
  sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!) : null;

/** CPU seconds (user + system, including reaped children) of another process, from /proc. */
export function processCpuSec(pid: number | null): number | null {
  if (pid === null) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime, stime, cutime, cstime are 14-17 (1-based).
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = [11, 12, 13, 14].reduce((s, i) => s + Number(f[i]), 0);
    return ticks / 100;
  } catch {
    return null;
  }
}

/** Live child processes of `pid`, from /proc (each thread lists the children it started). */
function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/**
 * CPU seconds of a process and everything under it, live or reaped: the host farm's stand-ins are
 * children of its spawner process, which lives as long as the farm and is never reaped during a run.
 */
export function processTreeCpuSec(pid: number | null): number | null {
  const own = processCpuSec(pid);
  if (pid === null || own === null) return own;
  return childPids(pid).reduce((s, c) => s + (processTreeCpuSec(c) ?? 0), own);
}

/** Resident set size of another process in MiB, from /proc. */
export function processRssMiB(pid: number | null): number | null {
  if (pid === null) return null;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}
