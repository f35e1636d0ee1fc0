import { startProductionServer } from './production-server.js';

/**
 * `npm run temporal:prod`: the pinned Temporal server on the machine's PostgreSQL (databases `temporal` and
 * `temporal_visibility`, kept across restarts), frontend on 7233, our namespace and search attributes; Ctrl-C stops it.
 */
const server = await startProductionServer({
  port: Number(process.env.TEMPORAL_PORT ?? 7233),
  namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
  fresh: process.env.TEMPORAL_FRESH === '1',
  ...(process.env.GPU_FLEET_HOST_TOKEN_KEY ? { hostTokenKey: process.env.GPU_FLEET_HOST_TOKEN_KEY } : {}),
});
console.log(`Temporal ${server.version} at ${server.address} (namespace ${server.namespace}); log: ${server.logFile}`);
const stop = () => void server.stop().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
