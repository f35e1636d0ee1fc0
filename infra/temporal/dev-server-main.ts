import { startDevServer } from './dev-server.js';

/** `npm run temporal:dev`: a dev server on the standard ports with our search attributes; Ctrl-C stops it. */
const server = await startDevServer({
  port: Number(process.env.TEMPORAL_PORT ?? 7233),
  uiPort: Number(process.env.TEMPORAL_UI_PORT ?? 8233),
  dbFile: process.env.TEMPORAL_DB_FILE,
});
console.log(`Temporal at ${server.address}, UI at ${server.uiUrl ?? '(external server)'}`);
const stop = () => void server.stop().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
