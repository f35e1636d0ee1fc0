import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { ensureTemporalCli } from '../../infra/temporal/ensure-cli.js';
import { ensureTemporalServer } from '../../infra/temporal/ensure-server.js';
import { sqlSearchAttributes } from '../../infra/temporal/sql-visibility.js';

// The compose stack's Temporal steps, run here with the same release's binaries as its images carry: the
// schema job against this machine's Postgres, the setup job against the engine under test.
const compose = readFileSync('infra/compose/docker-compose.yml', 'utf8');

/**
 * A service's `command: - >-` script as sh sees it: the folded lines joined by spaces, and `$$` (compose's
 * escape) turned into `$`.
 */
function script(service: string): string {
  const block = new RegExp(`\\n  ${service}:\\n[\\s\\S]*?\\n    command:\\n      - >-\\n((?:        .*\\n)+)`).exec(
    compose,
  );
  if (!block?.[1]) throw new Error(`no folded command for ${service} in infra/compose/docker-compose.yml`);
  return block[1]
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ')
    .replaceAll('$$', '$');
}
const ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const base = process.env.TEST_PG_DATABASE ?? 'gpufleet_test';

function sh(cmd: string, env: Record<string, string>, binDir: string): string {
  return execFileSync('sh', ['-ec', cmd], {
    env: { ...process.env, ...env, PATH: `${binDir}${path.delimiter}${process.env.PATH}` },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

describe('the compose stack’s Temporal steps', () => {
  it('temporal-schema makes both databases at the pinned schema, and a second run changes nothing', async () => {
    const dbs = { DBNAME: `${base}_compose`, VISIBILITY_DBNAME: `${base}_compose_vis` };
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    try {
      for (const db of Object.values(dbs)) await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      const env = { ...dbs, SQL_PLUGIN: 'postgres12', SQL_HOST: '127.0.0.1', SQL_PORT: '5432', SQL_USER: 'postgres' };
      const bin = path.dirname(ensureTemporalServer().sqlTool);
      const versions = async () => {
        const out: string[] = [];
        for (const db of Object.values(dbs)) {
          const c = new pg.Client({ connectionString: ADMIN_URL.replace(/\/[^/]*$/, `/${db}`) });
          await c.connect();
          out.push((await c.query<{ v: string }>('SELECT curr_version AS v FROM schema_version')).rows[0]!.v);
          await c.end();
        }
        return out;
      };
      sh(script('temporal-schema'), env, bin);
      const first = await versions();
      expect(first.every((v) => /^\d+\.\d+$/.test(v) && v !== '0.0')).toBe(true);
      sh(script('temporal-schema'), env, bin);
      expect(await versions()).toEqual(first);
    } finally {
      for (const db of Object.values(dbs)) await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      await admin.end();
    }
  });

  it('temporal-setup registers the namespace and our search attributes, idempotently', async () => {
    const address = inject('temporalAddress');
    const bin = path.dirname(ensureTemporalCli());
    sh(script('temporal-setup'), { TEMPORAL_ADDRESS: address }, bin);
    sh(script('temporal-setup'), { TEMPORAL_ADDRESS: address }, bin);
    const connection = await Connection.connect({ address });
    try {
      const listed = await connection.operatorService.listSearchAttributes({ namespace: 'gpu-fleet' });
      expect(listed.customAttributes).toEqual(sqlSearchAttributes());
    } finally {
      await connection.close();
    }
  });
});
