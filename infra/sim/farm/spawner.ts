import { type ChildProcess, spawn } from 'node:child_process';
import { type SpawnerEvent, SpawnerRequestSchema } from './spawner-protocol.js';

/**
 * The host farm's spawner: starts the simulated machines' processes (stand-ins) on the farm's behalf.
 * Node forks to spawn, and after a fork every page the parent writes takes a copy-on-write fault, so
 * a farm holding hundreds of hosts paid for each stand-in with tens of thousands of faults (~18 us each
 * on this sandbox's PVM guest). This process stays small; forking it costs little.
 */
const children = new Map<number, ChildProcess>();
const send = (e: SpawnerEvent) => process.send?.(e);

process.on('message', (raw) => {
  const parsed = SpawnerRequestSchema.safeParse(raw);
  if (!parsed.success) {
    console.error(`spawner: ignored a malformed request: ${parsed.error.message}`);
    return;
  }
  const req = parsed.data;
  if (req.t === 'kill') {
    children.get(req.id)?.kill(req.signal);
    return;
  }
  const { id } = req;
  const child = spawn(req.cmd, req.args, { stdio: ['ignore', 'pipe', 'pipe'], env: req.env ?? process.env });
  children.set(id, child);
  child.stdout.on('data', (b: Buffer) => send({ t: 'data', id, fd: 1, data: b.toString('base64') }));
  child.stderr.on('data', (b: Buffer) => send({ t: 'data', id, fd: 2, data: b.toString('base64') }));
  child.once('error', (err: NodeJS.ErrnoException) =>
    send({ t: 'error', id, message: err.message, ...(err.code ? { code: err.code } : {}) }),
  );
  child.once('exit', (code, signal) => send({ t: 'exit', id, code, signal }));
  child.once('close', () => {
    children.delete(id);
    send({ t: 'close', id });
  });
});

send({ t: 'ready' });

// The farm is gone: so are the machines it simulated.
process.once('disconnect', () => {
  for (const c of children.values()) c.kill('SIGKILL');
  process.exit(0);
});
