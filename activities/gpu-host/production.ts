import { createWriteStream } from 'node:fs';
import { type HostProcess, type SpawnHostProcess, spawnChild } from './spawn.js';

/**
 * The production prover that feeds cuzk-daemon once a host is promoted (Curio in production; the
 * simulated feeder in the demo). Started once, left running; its output goes to its own log.
 */
export class ProductionRunner {
  private child: HostProcess | null = null;

  constructor(
    private readonly command: string[],
    private readonly logFile: string,
    private readonly spawn: SpawnHostProcess = spawnChild,
  ) {}

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(env: Record<string, string>): boolean {
    if (this.running) return false;
    const [cmd, ...args] = this.command;
    if (!cmd) throw new Error('production command is empty');
    const log = createWriteStream(this.logFile, { flags: 'a' });
    const child = this.spawn(cmd, args, { ...process.env, ...env });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.once('exit', (code, signal) => {
      // Output can trail the exit event: stop piping first, so nothing writes to the ended log.
      child.stdout.unpipe(log);
      child.stderr.unpipe(log);
      log.end(`--- production prover exited code=${code} signal=${signal}\n`);
    });
    // A command that cannot start (missing binary) must not crash the worker with an unhandled 'error'.
    child.once('error', (err) => {
      child.stdout.unpipe(log);
      child.stderr.unpipe(log);
      log.end(`--- production prover failed to start: ${err.message}\n`);
      if (this.child === child) this.child = null;
    });
    this.child = child;
    return true;
  }

  stop(): void {
    if (this.running) this.child?.kill('SIGTERM');
  }
}
