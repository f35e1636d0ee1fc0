import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonSupervisor } from '../../activities/gpu-host/daemon.js';
import type { HostProcess } from '../../activities/gpu-host/spawn.js';
import { type Spawner, startSpawner } from '../../infra/sim/farm/spawner-client.js';

interface Ended {
  out: string;
  err: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  error: (Error & { code?: string }) | null;
}

/** Collects what a process wrote and how it ended, as the host steps see it. */
function collect(p: HostProcess): Promise<Ended> {
  let out = '';
  let err = '';
  let error: Ended['error'] = null;
  p.stdout.on('data', (b: Buffer) => (out += b.toString()));
  p.stderr.on('data', (b: Buffer) => (err += b.toString()));
  p.once('error', (e) => (error = e));
  return new Promise((resolve) =>
    p.once('close', () => resolve({ out, err, code: p.exitCode, signal: p.signalCode, error })),
  );
}

// The farm's hosts start their processes through this helper, not by forking the big farm process.
describe('host farm spawner', () => {
  let spawner: Spawner;
  beforeAll(() => {
    spawner = startSpawner();
  });
  afterAll(() => spawner.stop());

  it('passes output, the environment and the exit code through', async () => {
    const env = { PATH: process.env.PATH ?? '', FOO: 'bar baz' };
    const r = await collect(spawner.spawn('sh', ['-c', 'echo "out $FOO"; echo err >&2; exit 3'], env));
    expect(r).toMatchObject({ out: 'out bar baz\n', err: 'err\n', code: 3, signal: null, error: null });
  });

  it('kills with the signal asked for, and reports it', async () => {
    const p = spawner.spawn('sleep', ['30']);
    const ended = collect(p);
    await new Promise((resolve) => p.stdout.once('resume', resolve));
    expect(p.kill('SIGTERM')).toBe(true);
    expect(await ended).toMatchObject({ code: null, signal: 'SIGTERM' });
    expect(p.kill('SIGKILL')).toBe(false);
  });

  it('reports a command that cannot start as an error naming its code', async () => {
    const r = await collect(spawner.spawn('/nonexistent/cuzk-daemon', []));
    expect(r.error?.code).toBe('ENOENT');
  });

  it('runs the daemon supervisor: start, output to its log, SIGTERM on stop', async () => {
    const workDir = mkdtempSync(path.join(os.tmpdir(), 'spawner-'));
    const sup = new DaemonSupervisor({
      command: ['sh', '-c', 'echo "daemon up with $*"; exec sleep 30', 'sh'],
      listenAddress: '127.0.0.1:1',
      workDir,
      paramCacheDir: workDir,
      spawn: spawner.spawn,
    });
    await sup.start(2);
    expect(sup.running).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    await sup.stop();
    expect(sup.lastExit).toMatchObject({ code: null, signal: 'SIGTERM', requested: true });
    expect(readFileSync(path.join(workDir, 'cuzk-daemon.log'), 'utf8')).toContain(
      `daemon up with --config ${path.join(workDir, 'cuzk-daemon.toml')}`,
    );
  });

  it('when the spawner goes, its processes are reported killed and new ones fail to start', async () => {
    const own = startSpawner();
    const p = own.spawn('sleep', ['30']);
    const ended = collect(p);
    await new Promise((r) => setTimeout(r, 500));
    own.stop();
    expect(await ended).toMatchObject({ signal: 'SIGKILL' });
    const late = await collect(own.spawn('true', []));
    expect(late.error?.message).toMatch(/spawner exited/);
  });
});
