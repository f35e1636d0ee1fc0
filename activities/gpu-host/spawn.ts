import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';

/** What the host steps use of a child process (daemon, paramfetch, production prover). */
export interface HostProcess {
  readonly stdout: Readable;
  readonly stderr: Readable;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  kill(signal: NodeJS.Signals): boolean;
  once(event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
  once(event: 'close', listener: () => void): unknown;
  once(event: 'error', listener: (err: Error) => void): unknown;
}

/** Starts `cmd args` with stdin closed and stdout/stderr piped; `env` replaces the environment when given. */
export type SpawnHostProcess = (cmd: string, args: string[], env?: NodeJS.ProcessEnv) => HostProcess;

/**
 * Forks this process. A GPU-host worker is small, so that is cheap; the benchmark's host farm, which
 * runs hundreds of hosts in one big process, passes a spawner that forks from a small helper instead.
 */
export const spawnChild: SpawnHostProcess = (cmd, args, env) =>
  spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
