import type pg from 'pg';

/** What every store activity needs: the pool of the control worker's Postgres. */
export interface StoreDeps {
  pool: pg.Pool;
}
