import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../infra/sql/migrate.js';
import { startDevServer } from '../../infra/temporal/dev-server.js';

const ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const TEST_DB = process.env.TEST_PG_DATABASE ?? 'gpufleet_test';

/** One real Temporal dev server and one freshly migrated Postgres database for the whole run. */
export default async function setup(project: TestProject) {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect().catch((err: unknown) => {
    throw new Error(`Postgres is not reachable at ${ADMIN_URL} (start it, or set TEST_PG_ADMIN_URL): ${String(err)}`);
  });
  await admin.query(`DROP DATABASE IF EXISTS ${TEST_DB} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${TEST_DB}`);
  await admin.end();
  const databaseUrl = ADMIN_URL.replace(/\/[^/]*$/, `/${TEST_DB}`);
  const pool = new pg.Pool({ connectionString: databaseUrl });
  await migrate(pool);
  await pool.end();

  const server = await startDevServer({ headless: false });
  project.provide('temporalAddress', server.address);
  project.provide('temporalUiUrl', server.uiUrl ?? '');
  project.provide('databaseUrl', databaseUrl);
  return async () => {
    await server.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalUiUrl: string;
    databaseUrl: string;
  }
}
