import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const SQL = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../infra/sql');
const sql = (file: string) => readFileSync(path.join(SQL, file), 'utf8');
// A schema of this file's own: the migrations run there from scratch, with rows written before 003.
const schema = `migrate_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
let client: pg.Client;

beforeAll(async () => {
  client = new pg.Client({ connectionString: inject('databaseUrl') });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.query(`SET search_path TO ${schema}`);
});
afterAll(async () => {
  await client.query(`DROP SCHEMA ${schema} CASCADE`);
  await client.end();
});

describe('migration 003: records keyed by rental', () => {
  it('keeps every existing row, keyed by its workflow id, and then takes a second rental of the same id', async () => {
    await client.query(sql('001_init.sql'));
    await client.query(sql('002_event_recorded_at.sql'));
    const wid = 'instance-offer-7-1';
    await client.query(
      `INSERT INTO instances (workflow_id, offer_id, instance_id, machine_id, label, stage, outcome, failure_type)
       VALUES ($1, 7, 70, 700, 'gpufleet-instance-offer-7-1', 'killed', 'killed', 'HostLost')`,
      [wid],
    );
    await client.query(
      `INSERT INTO lifecycle_events (workflow_id, seq, stage, message, at) VALUES ($1, 1, 'provisioning', 'entered provisioning', now()), ($1, 2, 'killed', 'entered killed', now())`,
      [wid],
    );
    await client.query(
      `INSERT INTO benchmark_results (workflow_id, machine_id, gpu_name, num_gpus, requested, completed, concurrency,
         elapsed_ms, rate, timings, stopped_early) VALUES ($1, 700, 'RTX 4090', 2, 4, 4, 2, 1000, 30, '[]', false)`,
      [wid],
    );
    await client.query(`INSERT INTO log_tails (workflow_id, source, text) VALUES ($1, 'cuzk-daemon', 'tail')`, [wid]);

    await client.query(sql('003_rental_key.sql'));

    for (const table of ['instances', 'lifecycle_events', 'benchmark_results', 'log_tails']) {
      const rows = await client.query<{ rental_key: string; workflow_id: string }>(
        `SELECT rental_key, workflow_id FROM ${table}`,
      );
      expect(rows.rows.length, table).toBeGreaterThan(0);
      for (const r of rows.rows) expect(r, table).toEqual({ rental_key: wid, workflow_id: wid });
    }
    // The same workflow id rents again: its records stand beside the first rental's, not on them.
    const again = `${wid}.0192c1a0-0000-7000-8000-000000000001`;
    await client.query(
      `INSERT INTO instances (rental_key, workflow_id, offer_id, label, stage) VALUES ($1, $2, 7, $3, 'provisioning')`,
      [again, wid, `gpufleet-${again}`],
    );
    await client.query(
      `INSERT INTO lifecycle_events (rental_key, workflow_id, seq, stage, message, at) VALUES ($1, $2, 1, 'provisioning', 'entered provisioning', now())`,
      [again, wid],
    );
    const byRental = await client.query<{ rental_key: string; n: number }>(
      `SELECT rental_key, count(*)::int AS n FROM lifecycle_events WHERE workflow_id = $1 GROUP BY rental_key ORDER BY n`,
      [wid],
    );
    expect(byRental.rows).toEqual([
      { rental_key: again, n: 1 },
      { rental_key: wid, n: 2 },
    ]);
    await expect(
      client.query(`INSERT INTO instances (rental_key, workflow_id, offer_id, stage) VALUES ($1, $2, 7, 'x')`, [
        again,
        wid,
      ]),
    ).rejects.toThrow(/duplicate key/);
  });
});
