import { readdirSync, readFileSync } from 'node:fs';

export interface HostProcess {
  pid: number;
  /** Process group: the simulator boots each host as a group of its own. */
  pgid: number;
  cmd: string;
  /** The host's WORK_DIR (daemon config and log). */
  workDir: string;
}

function readProc(pid: number, file: string): string | null {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return null; // gone, or not ours to read
  }
}

/** Fields of /proc/<pid>/stat after the command name, which may itself contain spaces and parentheses. */
function statFields(pid: number): string[] | null {
  const stat = readProc(pid, 'stat');
  if (stat === null) return null;
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/**
 * Every live process of one simulated host, found by the host's own work directory in its environment
 * (the worker gets WORK_DIR from the simulator; everything it starts inherits it). Read from /proc, not
 * from the simulator's bookkeeping, so an orphan the simulator lost track of still shows. Zombies are
 * dead (only their exit status is left), so they do not count.
 */
export function hostProcesses(instanceId: number): HostProcess[] {
  const marker = `WORK_DIR=`;
  const suffix = `/instance-${instanceId}`;
  const found: HostProcess[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const environ = readProc(pid, 'environ');
    if (environ === null) continue;
    const workDir = environ
      .split('\0')
      .find((v) => v.startsWith(marker))
      ?.slice(marker.length);
    if (!workDir?.endsWith(suffix)) continue;
    const fields = statFields(pid);
    if (!fields || fields[0] === 'Z' || fields[0] === 'X') continue;
    const cmd = (readProc(pid, 'cmdline') ?? '').split('\0').join(' ').trim();
    found.push({ pid, pgid: Number(fields[2]), cmd, workDir });
  }
  return found;
}

/** True while the pid names a live (non-zombie) process. */
export function processAlive(pid: number): boolean {
  const fields = statFields(pid);
  return fields !== null && fields[0] !== 'Z' && fields[0] !== 'X';
}

/** The simulated host's GPU-host worker and its cuzk-daemon child. */
export function hostWorkerAndDaemon(instanceId: number): { worker?: HostProcess; daemon?: HostProcess } {
  const procs = hostProcesses(instanceId);
  return {
    worker: procs.find((p) => p.cmd.includes('workers/gpu-host-worker.ts')),
    daemon: procs.find((p) => p.cmd.includes('infra/sim/cuzk/main.ts')),
  };
}
