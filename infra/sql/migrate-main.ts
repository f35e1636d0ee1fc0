import pg from 'pg';
import { migrate } from './migrate.js';

/**
 * Applies pending migrations to DATABASE_URL (`npm run db:migrate`), e.g. before a deploy. The control
 * worker also migrates at start; this runs it alone. The URL holds the password: it is never printed.
 */
const url = process.env.DATABASE_URL;
if (!url) {
  console.error('db:migrate: DATABASE_URL is required (postgres://user@host:port/db)');
  process.exit(2);
}
const pool = new pg.Pool({ connectionString: url, max: 1 });
try {
  const applied = await migrate(pool);
  console.log(applied.length > 0 ? `applied ${applied.join(', ')}` : 'no pending migrations');
} catch (err) {
  console.error(`db:migrate: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await pool.end();
}
