import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

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
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what} not reached within ${ms} ms:\n${io.out}\n${io.err}`);
    await new Promise((r) => setTimeout(r, 500));
  }
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
  // Give killed groups a moment to be reaped, then nothing the demo started may be left.
  await new Promise((r) => setTimeout(r, 1000));
  expect(seen.filter(stillAlive).map((p) => `${p.pid} ${p.cmd}`)).toEqual([]);
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

  it('Ctrl-C while it keeps the UI up stops the promoted hosts it still runs', { timeout: 300_000 }, async () => {
    const demo = startDemo();
    try {
      await until('the end of the run', () => demo.io.out.includes('The UI stays up'), 240_000, demo.io);
      expect(demo.io.out.match(/\[demo\] verdict: /g)?.length).toBe(7);
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
  });
});
