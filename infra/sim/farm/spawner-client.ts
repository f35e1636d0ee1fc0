import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { HostProcess, SpawnHostProcess } from '../../../activities/gpu-host/spawn.js';
import { type ProcessEvent, SpawnerEventSchema, type SpawnerRequest } from './spawner-protocol.js';

const SPAWNER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'spawner.ts');

/** A process the spawner started, seen from the farm with the events and streams of a ChildProcess. */
class SpawnedProcess extends EventEmitter implements HostProcess {
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;

  constructor(
    private readonly id: number,
    private readonly request: (r: SpawnerRequest) => void,
  ) {
    super();
  }

  kill(signal: NodeJS.Signals): boolean {
    if (this.exitCode !== null || this.signalCode !== null) return false;
    this.request({ t: 'kill', id: this.id, signal });
    return true;
  }

  deliver(e: ProcessEvent): void {
    switch (e.t) {
      case 'data':
        (e.fd === 1 ? this.stdout : this.stderr).write(Buffer.from(e.data, 'base64'));
        break;
      case 'error':
        this.emit('error', Object.assign(new Error(e.message), e.code ? { code: e.code } : {}));
        break;
      case 'exit':
        this.exitCode = e.code;
        this.signalCode = e.signal;
        this.emit('exit', e.code, e.signal);
        break;
      case 'close':
        this.stdout.end();
        this.stderr.end();
        // As with a ChildProcess, 'close' comes after the output has been handed on.
        setImmediate(() => this.emit('close', this.exitCode, this.signalCode));
        break;
    }
  }
}

export interface Spawner {
  spawn: SpawnHostProcess;
  stop(): void;
}

/** Starts the spawner process (spawner.ts) and returns a SpawnHostProcess that goes through it. */
export function startSpawner(): Spawner {
  const helper: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SPAWNER], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const live = new Map<number, SpawnedProcess>();
  let nextId = 0;
  let gone: Error | null = null;
  let waiting: SpawnerRequest[] | null = [];
  const request = (r: SpawnerRequest) => {
    if (gone) return;
    if (waiting) waiting.push(r);
    else send(r);
  };
  // A send can race the spawner's exit; the exit handler then reports every live process.
  const send = (r: SpawnerRequest) => {
    if (helper.connected) helper.send(r, () => undefined);
  };
  helper.on('error', (err) => console.error(`host farm: spawner: ${err.message}`));
  helper.on('message', (raw) => {
    const parsed = SpawnerEventSchema.safeParse(raw);
    if (!parsed.success) {
      console.error(`host farm: malformed spawner event: ${parsed.error.message}`);
      return;
    }
    const e = parsed.data;
    if (e.t === 'ready') {
      const queued = waiting ?? [];
      waiting = null;
      for (const r of queued) send(r);
      return;
    }
    live.get(e.id)?.deliver(e);
    if (e.t === 'close') live.delete(e.id);
  });
  helper.once('exit', (code, signal) => {
    gone = new Error(`the host farm's spawner exited (code ${code}, signal ${signal})`);
    // Its children were killed with it: report each as a process killed by SIGKILL.
    for (const [id, p] of live) {
      if (p.exitCode === null && p.signalCode === null) p.deliver({ t: 'exit', id, code: null, signal: 'SIGKILL' });
      p.deliver({ t: 'close', id });
    }
    live.clear();
  });
  return {
    spawn(cmd, args, env) {
      const id = nextId++;
      const p = new SpawnedProcess(id, request);
      if (gone) {
        const err = gone;
        setImmediate(() => {
          p.deliver({ t: 'error', id, message: err.message });
          p.deliver({ t: 'close', id });
        });
        return p;
      }
      live.set(id, p);
      // The farm's environment as it is now (a forked child would see it so), not as the spawner started with.
      const childEnv = Object.entries(env ?? process.env).filter((kv): kv is [string, string] => kv[1] !== undefined);
      request({ t: 'spawn', id, cmd, args, env: Object.fromEntries(childEnv) });
      return p;
    },
    stop() {
      if (helper.connected) helper.disconnect();
    },
  };
}
