import { startProductionServer } from '../../infra/temporal/production-server.js';

/**
 * The engine group's first global setup: the pinned Temporal server on PostgreSQL, fresh store and
 * visibility databases named after this run's test database, exported as TEMPORAL_ADDRESS so that the
 * ordinary global setup (test/helpers/global-setup.ts, next in the list) and every suite use it unchanged.
 * A TEMPORAL_ADDRESS set by the caller (an existing cluster) is used as it is.
 */
export default async function setup() {
  if (process.env.TEMPORAL_ADDRESS) return;
  const base = process.env.TEST_PG_DATABASE ?? 'gpufleet_test';
  const server = await startProductionServer({
    storeDatabase: `${base}_temporal`,
    visibilityDatabase: `${base}_temporal_vis`,
    fresh: true,
    namespace: 'default',
  });
  process.env.TEMPORAL_ADDRESS = server.address;
  return async () => {
    delete process.env.TEMPORAL_ADDRESS;
    await server.stop();
  };
}
