import type pg from 'pg';

/**
 * Runs `work` in one database transaction on one connection: all of its writes land or none do, so a
 * retried activity finds either the whole write or nothing of it. A connection lost mid-way rolls back
 * on the server; the broken client is discarded, not pooled again.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (db: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // The pool only listens to idle clients: an error event on a checked-out one would crash the worker.
  const onError = (err: Error) => {
    broken = err;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackErr: unknown) => {
      broken ??= rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
    });
    throw err;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
