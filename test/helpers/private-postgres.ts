import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { migrate } from '../../infra/sql/migrate.js';
import { freePort } from '../../infra/temporal/dev-server.js';

const run = promisify(execFile);

/**
 * A Postgres cluster of one test's own (initdb in a temp dir, its own port), so the test can stop and
 * start it without touching the machine's shared server. initdb and pg_ctl refuse to run as root:
 * as root they run as the `postgres` user.
 */
export interface PrivatePostgres {
  url: string;
  port: number;
  /** Fast shutdown: every connection is cut, new ones are refused (ECONNREFUSED) until start(). */
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  const v = versions[0];
  if (!v) throw new Error(`no Postgres binaries under ${root}`);
  return path.join(root, v, 'bin');
}

async function asPostgresUser(cmd: string, args: string[]): Promise<void> {
  const isRoot = process.getuid?.() === 0;
  const [file, argv] = isRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  await run(file, argv, { timeout: 60_000 });
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'private-pg-'));
  // The postgres user must own the data dir; the temp parent must let it in.
  chmodSync(dir, 0o777);
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'postgres.log');
  const port = await freePort();
  await asPostgresUser(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  const ctl = (action: 'start' | 'stop') =>
    asPostgresUser(
      path.join(bin, 'pg_ctl'),
      action === 'start'
        ? ['-D', data, '-l', log, '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, 'start']
        : ['-D', data, '-m', 'fast', '-w', 'stop'],
    );
  await ctl('start');
  const url = `postgres://postgres@127.0.0.1:${port}/gpufleet`;
  const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
  await admin.connect();
  await admin.query('CREATE DATABASE gpufleet');
  await admin.end();
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  await migrate(pool);
  await pool.end();
  let up = true;
  return {
    url,
    port,
    async stop() {
      await ctl('stop');
      up = false;
    },
    async start() {
      await ctl('start');
      up = true;
    },
    async destroy() {
      if (up) await ctl('stop').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
