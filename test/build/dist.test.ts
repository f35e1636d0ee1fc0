import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pollUntil } from '../../infra/dev/poll.js';

/**
 * Production runs what `npm run build` writes to dist/ with plain `node` (the Docker images do the same):
 * the compiled entry points must start without tsx, find the .proto and migrations beside them, and the
 * control worker must run the workflow bundle made at build time rather than bundling at start-up.
 */
const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dist = (p: string) => path.join(ROOT, 'dist', p);
const suffix = `${process.pid}-${Date.now()}`;
const env = {
  ...process.env,
  TEMPORAL_ADDRESS: inject('temporalAddress'),
  DATABASE_URL: inject('databaseUrl'),
  NODE_OPTIONS: '',
};

const children: ChildProcess[] = [];
function start(entry: string, extra: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [dist(entry)], { cwd: ROOT, env: { ...env, ...extra } });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  children.push(child);
  return { child, output: () => out };
}

let connection: Connection;
let client: Client;
beforeAll(async () => {
  await run('npm', ['run', 'build'], { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024 });
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection });
}, 600_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  await connection?.close();
});

describe('built entry points run with node', () => {
  it('the CLI prints its help', async () => {
    const { stdout } = await run(process.execPath, [dist('workers/cli.js'), '--help'], { cwd: ROOT, env });
    expect(stdout).toContain('gpu-fleet operator CLI');
  });

  it('the gpu-fleet bin runs the build, not tsx, once dist/ is current', async () => {
    const { stdout, stderr } = await run(process.execPath, [path.join(ROOT, 'bin/gpu-fleet.mjs'), '--version'], {
      cwd: tmpdir(),
      env: { ...env, GPU_FLEET_CLI_DEBUG: '1' },
    });
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(stderr).toContain(`running ${dist('workers/cli.js')}`);
    expect(stderr).not.toContain('through tsx');
  });

  it('db:migrate finds its migrations beside the compiled migrator', async () => {
    const { stdout } = await run(process.execPath, [dist('infra/sql/migrate-main.js')], { cwd: ROOT, env });
    expect(stdout).toBe('no pending migrations\n');
  });

  it('the control worker serves the built CLI from the build-time workflow bundle', async () => {
    const queue = `dist-smoke-${suffix}`;
    const worker = start('workers/control-worker.js', {
      CONTROL_TASK_QUEUE: queue,
      VAST_API_KEY: 'unused-in-this-test',
      VAST_API_URL: 'http://127.0.0.1:9',
    });
    // machineAdmin is a workflow with a store activity: its answer (this machine was never marked, exit 1)
    // says the bundle ran and reached Postgres.
    const answer = await run(
      process.execPath,
      [dist('workers/cli.js'), 'machines', 'unignore', '424242', '--reason', 'dist smoke'],
      { cwd: ROOT, env: { ...env, CONTROL_TASK_QUEUE: queue }, timeout: 120_000 },
    ).catch((err: { code?: number; stderr?: string }) => err);
    expect(answer).toMatchObject({ code: 1, stderr: expect.stringContaining('machine 424242 was never marked bad') });
    expect(worker.child.exitCode).toBeNull();
    expect(worker.output()).not.toContain('Workflow bundle created');
  }, 180_000);

  it('the GPU-host worker polls its own queue', async () => {
    const queue = `dist-smoke-host-${suffix}`;
    const host = start('workers/gpu-host-worker.js', {
      HOST_TASK_QUEUE: queue,
      WORK_DIR: mkdtempSync(path.join(tmpdir(), 'gpu-host-')),
      PARAM_CACHE_DIR: mkdtempSync(path.join(tmpdir(), 'params-')),
    });
    const pollers = await pollUntil(
      `a poller on ${queue}`,
      async () => {
        if (host.child.exitCode !== null) throw new Error(`gpu-host worker exited: ${host.output()}`);
        const res = await client.workflowService.describeTaskQueue({
          namespace: 'default',
          taskQueue: { name: queue },
          taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
        });
        return res.pollers.length > 0 ? res.pollers.length : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, isFatal: (err) => String(err).includes('exited') },
    );
    expect(pollers).toBeGreaterThan(0);
  }, 90_000);
});
