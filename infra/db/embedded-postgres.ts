import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/**
 * Postgres compiled to WASM (PGlite) behind a real Postgres wire-protocol socket, so the demo runs the
 * same `pg` code path as production with nothing installed. Data lives in `dataDir` (or memory).
 */
export async function startEmbeddedPostgres(dataDir?: string): Promise<EmbeddedPostgres> {
  const db = await PGlite.create(dataDir);
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 8 });
  await server.start();
  const addr = server.getServerConn();
  return {
    url: `postgres://postgres@${addr}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
