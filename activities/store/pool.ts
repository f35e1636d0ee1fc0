import pg from 'pg';

/** One pool per worker process; the URL (with any password) stays in the worker's environment. */
export function createPool(databaseUrl: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max, connectionTimeoutMillis: 10_000 });
  // An idle client's error must not crash the worker; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}
