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

describe('npm run demo and Ctrl-C', () => {
  it(
    'stops everything it started, simulated hosts included, and exits without an exception',
    { timeout: 240_000 },
    async () => {
      // Its own process group, as a shell runs a foreground job: Ctrl-C signals the whole group.
      const demo = spawn(process.execPath, ['--import', 'tsx', 'workers/demo.ts'], {
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, SIM_TIME_SCALE: '0.01' },
      });
      let out = '';
      let err = '';
      demo.stdout.on('data', (d: Buffer) => (out += d.toString()));
      demo.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        demo.once('exit', (code, signal) => resolve({ code, signal })),
      );
      const pid = demo.pid!;
      try {
        // Wait until simulated hosts are up: GPU-host workers and their daemons, mid-lifecycle.
        let seen: Array<{ pid: number; start: string; cmd: string }> = [];
        const until = Date.now() + 150_000;
        while (Date.now() < until) {
          seen = descendants(pid);
          if (seen.filter((p) => p.cmd.includes('workers/gpu-host-worker.ts')).length >= 3) break;
          await new Promise((r) => setTimeout(r, 500));
        }
        const hosts = seen.filter((p) => p.cmd.includes('workers/gpu-host-worker.ts'));
        expect(hosts.length, `demo output so far:\n${out}\n${err}`).toBeGreaterThanOrEqual(3);
        expect(seen.some((p) => p.cmd.includes('server start-dev'))).toBe(true);
        // Daemons started since the snapshot count too: take it once more right before the signal.
        seen = [...seen, ...descendants(pid).filter((p) => !seen.some((s) => s.pid === p.pid))];

        process.kill(-pid, 'SIGINT');
        const { code, signal } = await Promise.race([
          exited,
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error(`demo did not exit:\n${out}\n${err}`)), 90_000),
          ),
        ]);
        expect(signal).toBeNull();
        expect(code, err).toBe(0);
        expect(err).not.toMatch(/Error|at .*:\d+:\d+/);
        expect(out).toContain('[demo] stopped');
        // Give killed groups a moment to be reaped, then nothing the demo started may be left.
        await new Promise((r) => setTimeout(r, 1000));
        const left = seen.filter(stillAlive);
        expect(left.map((p) => `${p.pid} ${p.cmd}`)).toEqual([]);
      } finally {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    },
  );
});
