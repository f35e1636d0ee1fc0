import { readFileSync } from 'node:fs';

export const log = (m: string) => console.error(`[bench] ${m}`);
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
