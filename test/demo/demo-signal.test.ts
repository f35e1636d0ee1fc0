import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { lifecycleWorkflowId } from '../../workflows/domain/task-queues.js';
import { waitUntil } from '../../infra/dev/poll.js';

const run = promisify(execFile);

/** pid -> [ppid, start time in clock ticks, command line], for every live (non-zombie) process, from /proc. */
function processTable(): Map<number, { ppid: number; start: string; cmd: string }> {
  const table = new Map<number, { ppid: number; start: string; cmd: string }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (f[0] === 'Z' || f[0] === 'X') continue;
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
      table.set(Number(name), { ppid: Number(f[1]), start: f[19] ?? '', cmd });
    } catch {
      /* gone while reading */
    }
  }
  return table;
}

/** Every process descended from `root` (hosts run in process groups of their own, but stay its children). */
function descendants(root: number): Array<{ pid: number; start: string; cmd: string }> {
  const table = processTable();
  const out: Array<{ pid: number; start: string; cmd: string }> = [];
  const queue = [root];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const [pid, p] of table)
      if (p.ppid === parent) {
        out.push({ pid, start: p.start, cmd: p.cmd });
        queue.push(pid);
      }
  }
  return out;
}

function stillAlive(p: { pid: number; start: string }): boolean {
  const now = processTable().get(p.pid);
  return now !== undefined && now.start === p.start; // same pid and start time: the same process
}

/** Starts the demo in a process group of its own, as a shell runs a foreground job. */
function startDemo() {
  const demo = spawn(process.execPath, ['--import', 'tsx', 'infra/dev/demo.ts'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SIM_TIME_SCALE: '0.01' },
  });
  const io = { out: '', err: '' };
  demo.stdout.on('data', (d: Buffer) => (io.out += d.toString()));
  demo.stderr.on('data', (d: Buffer) => (io.err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    demo.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { pid: demo.pid!, io, exited };
}

async function until(what: string, check: () => boolean, ms: number, io: { out: string; err: string }) {
  await waitUntil(what, check, { timeoutMs: ms, intervalMs: 500 }).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}:\n${io.out}\n${io.err}`);
  });
}

/** Signals the demo, then asserts a clean exit and that no process it started is left (from /proc). */
async function stopAndCheck(
  demo: ReturnType<typeof startDemo>,
  seen: Array<{ pid: number; start: string; cmd: string }>,
  send: () => void,
): Promise<void> {
  send();
  const { code, signal } = await Promise.race([
    demo.exited,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`demo did not exit:\n${demo.io.out}\n${demo.io.err}`)), 90_000),
    ),
  ]);
  expect(signal).toBeNull();
  expect(code, demo.io.err).toBe(0);
  expect(demo.io.err).not.toMatch(/Error|at .*:\d+:\d+/);
  expect(demo.io.out).toContain('[demo] stopped');
  // Killed groups take a moment to be reaped; then nothing the demo started may be left (the assertion
  // below names what is, should the wait time out).
  await waitUntil('every process the demo started gone', () => !seen.some(stillAlive), {
    timeoutMs: 10_000,
    intervalMs: 200,
  }).catch(() => undefined);
  expect(seen.filter(stillAlive).map((p) => `${p.pid} ${p.cmd}`)).toEqual([]);
}

/** The final table's promoted rows: offer id and rate (real proofs/h, as printed). */
function promotedInTable(out: string): Array<{ offerId: number; rate: number }> {
  const table = out.slice(out.indexOf('Outcomes ('));
  const rows: Array<{ offerId: number; rate: number }> = [];
  for (const line of table.split('\n')) {
    const m = /^(\d+)\s.*\spromoted\s+-\s+([\d,.]+) proofs\/h/.exec(line);
    if (m) rows.push({ offerId: Number(m[1]), rate: Number(m[2]?.replace(/,/g, '')) });
  }
  return rows;
}

/** The operator CLI against the demo's server, as the demo's last lines tell the operator to run it. */
async function demoCli(out: string, args: string[]): Promise<string> {
  const address = /export TEMPORAL_ADDRESS=(\S+)/.exec(out)?.[1];
  if (!address) throw new Error(`the demo did not print its TEMPORAL_ADDRESS:\n${out}`);
  // The store's reads (report) need its URL, which the same line gives for the embedded store.
  const databaseUrl = /export .*DATABASE_URL=(\S+)/.exec(out)?.[1];
  if (!databaseUrl) throw new Error(`the demo did not print its DATABASE_URL:\n${out}`);
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'workers/cli.ts', ...args], {
    env: { ...process.env, TEMPORAL_ADDRESS: address, DATABASE_URL: databaseUrl, SIM_TIME_SCALE: '0.01' },
  });
  return stdout;
}

/** `fleet status`, `status` and `report` show the same real proofs/h as the demo's final table. */
async function expectCliMatchesTable(out: string): Promise<void> {
  const promoted = promotedInTable(out);
  expect(promoted.length, out).toBeGreaterThanOrEqual(1);
  const fleet = JSON.parse(await demoCli(out, ['fleet', 'status', '--json'])) as {
    lifecycles: Array<{ workflowId: string; stage: string; benchRateProofsPerHour: number | null }>;
  };
  for (const p of promoted) {
    // Real units: the demo's hosts prove tens of proofs per real hour, not thousands per compressed one.
    expect(p.rate).toBeLessThan(500);
    const id = lifecycleWorkflowId(p.offerId);
    const row = fleet.lifecycles.find((l) => l.workflowId === id);
    expect(row?.stage).toBe('promoted');
    expect(Math.abs((row?.benchRateProofsPerHour ?? -1) - p.rate)).toBeLessThanOrEqual(0.05);
    const status = JSON.parse(await demoCli(out, ['status', id, '--json'])) as {
      rateProofsPerHour: number;
      productionRateProofsPerHour: number | null;
      cost: { totalUsd: number; beforeVerdictUsd: number } | null;
    };
    expect(Math.abs(status.rateProofsPerHour - p.rate)).toBeLessThanOrEqual(0.05);
    // The watch's windows are real proofs/h too (a window's rate differs from the benchmark's, not 100x).
    expect(status.productionRateProofsPerHour).toBeGreaterThan(p.rate / 3);
    expect(status.productionRateProofsPerHour).toBeLessThan(p.rate * 3);
    expect(status.cost?.totalUsd).toBeGreaterThan(status.cost?.beforeVerdictUsd ?? Infinity);
  }
  const report = JSON.parse(await demoCli(out, ['report', '--by', 'gpu', '--json'])) as {
    total: { rentals: number; promoted: number; deliveringProofsPerHour: number; wasteUsd: number };
  };
  // Every lifecycle the scaler started; it may rent an offer again after an inconclusive end.
  const started = Number(/scaler started (\d+) lifecycles/.exec(out)?.[1] ?? NaN);
  expect(report.total.rentals).toBeGreaterThanOrEqual(started);
  expect(report.total.rentals).toBeGreaterThanOrEqual(fleet.lifecycles.length);
  expect(report.total.promoted).toBe(promoted.length);
  const sum = promoted.reduce((s, p) => s + p.rate, 0);
  expect(Math.abs(report.total.deliveringProofsPerHour - sum)).toBeLessThanOrEqual(0.05 * promoted.length + 0.01);
  expect(report.total.wasteUsd).toBeGreaterThan(0);
  // The human form, for docs/cli.md's example.
  console.log(await demoCli(out, ['report', '--by', 'gpu']));
}

const hostWorkers = (ps: Array<{ cmd: string }>) => ps.filter((p) => p.cmd.includes('workers/gpu-host-worker.ts'));

describe('npm run demo, stopped by a signal', () => {
  it(
    'SIGTERM mid-run stops everything it started, simulated hosts included, without an exception',
    { timeout: 240_000 },
    async () => {
      const demo = startDemo();
      try {
        // Wait until simulated hosts are up: GPU-host workers and their daemons, mid-lifecycle.
        let seen: Array<{ pid: number; start: string; cmd: string }> = [];
        await until(
          '3 simulated hosts',
          () => hostWorkers((seen = descendants(demo.pid))).length >= 3,
          150_000,
          demo.io,
        );
        expect(seen.some((p) => p.cmd.includes('server start-dev'))).toBe(true);
        // SIGTERM (a service manager's stop) reaches the demo alone.
        await stopAndCheck(demo, seen, () => process.kill(demo.pid, 'SIGTERM'));
      } finally {
        try {
          process.kill(-demo.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    },
  );

  it(
    "shows the final table's real rates in the CLI, then Ctrl-C while the UI stays up stops the promoted hosts",
    { timeout: 360_000 },
    async () => {
      const demo = startDemo();
      try {
        await until('the end of the run', () => demo.io.out.includes('The UI stays up'), 240_000, demo.io);
        // One verdict per lifecycle the scaler started (it passes over the hosts predicted too slow).
        const started = Number(/scaler started (\d+) lifecycles/.exec(demo.io.out)?.[1] ?? NaN);
        expect(started).toBeGreaterThanOrEqual(1);
        expect(demo.io.out.match(/\[demo\] verdict: /g)?.length).toBe(started);
        await expectCliMatchesTable(demo.io.out);
        const seen = descendants(demo.pid);
        expect(hostWorkers(seen).length).toBeGreaterThanOrEqual(1); // the promoted ones keep proving
        // Ctrl-C in a terminal signals the whole foreground group: the demo and its Temporal server alike,
        // so the demo's stop cannot count on the server answering.
        await stopAndCheck(demo, seen, () => process.kill(-demo.pid, 'SIGINT'));
      } finally {
        try {
          process.kill(-demo.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    },
  );
});
