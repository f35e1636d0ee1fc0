import { createWriteStream } from 'node:fs';
import { access, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { renderDaemonConfig } from './daemon-config.js';
import { readTail } from './log-tail.js';
import { type HostProcess, type SpawnHostProcess, spawnChild } from './spawn.js';

export interface DaemonConfig {
  /** argv of the daemon; `--config <file>` is appended. */
  command: string[];
  listenAddress: string;
  workDir: string;
  paramCacheDir: string;
  /** How the daemon process is started (default: a child of this process). */
  spawn?: SpawnHostProcess;
}

export interface DaemonExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when we stopped it on purpose. */
  requested: boolean;
}

/**
 * Starts, stops and watches cuzk-daemon. Its own log file survives restarts (appended) and is what an
 * operator needs when it dies, so every failure report carries its tail.
 */
export class DaemonSupervisor {
  private child: HostProcess | null = null;
  private exitInfo: DaemonExit | null = null;
  private stopping = false;
  private exited: Promise<void> = Promise.resolve();
  readonly logFile: string;
  readonly configFile: string;

  constructor(private readonly cfg: DaemonConfig) {
    this.logFile = path.join(cfg.workDir, 'cuzk-daemon.log');
    this.configFile = path.join(cfg.workDir, 'cuzk-daemon.toml');
  }

  get running(): boolean {
    return this.child !== null && this.exitInfo === null;
  }

  get lastExit(): DaemonExit | null {
    return this.exitInfo;
  }

  async pceCached(): Promise<boolean> {
    try {
      await access(path.join(this.cfg.paramCacheDir, 'pce-porep-32g.bin'));
      return true;
    } catch {
      return false;
    }
  }

  async start(partitionWorkers: number): Promise<void> {
    await this.stop();
    await mkdir(this.cfg.workDir, { recursive: true });
    await writeFile(this.configFile, renderDaemonConfig({ ...this.cfg, partitionWorkers }));
    const log = createWriteStream(this.logFile, { flags: 'a' });
    await new Promise<void>((resolve) => log.once('open', () => resolve()));
    log.write(
      `\n--- gpu-host: starting daemon with partition_workers=${partitionWorkers} at ${new Date().toISOString()}\n`,
    );
    const [cmd, ...args] = this.cfg.command;
    if (!cmd) throw new Error('daemon command is empty');
    const child = (this.cfg.spawn ?? spawnChild)(cmd, [...args, '--config', this.configFile]);
    this.child = child;
    this.exitInfo = null;
    this.stopping = false;
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    this.exited = new Promise((resolve) => {
      const done = (code: number | null, signal: NodeJS.Signals | null) => {
        this.exitInfo = { code, signal, requested: this.stopping };
        // Output can trail the exit event: stop piping first, so nothing writes to the ended log.
        child.stdout.unpipe(log);
        child.stderr.unpipe(log);
        log.end(`--- gpu-host: daemon exited code=${code} signal=${signal}\n`);
        resolve();
      };
      child.once('exit', done);
      child.once('error', (err) => {
        log.write(`--- gpu-host: failed to start daemon: ${err.message}\n`);
        done(127, null);
      });
    });
  }

  /** SIGTERM (SIGINT leaves the real daemon half-alive), then SIGKILL after a grace period. */
  async stop(graceMs = 10_000): Promise<void> {
    const child = this.child;
    if (!child || this.exitInfo !== null) return;
    this.stopping = true;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  logTail(maxBytes?: number): Promise<string> {
    return readTail(this.logFile, maxBytes);
  }
}
