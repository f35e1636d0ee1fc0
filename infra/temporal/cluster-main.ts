import { randomBytes } from 'node:crypto';
import { startCluster } from './cluster.js';

/**
 * `npm run temporal:cluster`: two Temporal server processes on the machine's PostgreSQL (databases
 * `temporal_cluster` and `temporal_cluster_visibility`, kept across restarts), mTLS on both frontends,
 * HAProxy in front, our authorizer in the servers; prints what the control plane sets. Ctrl-C stops it all.
 */
const hostTokenKey = process.env.GPU_FLEET_HOST_TOKEN_KEY ?? randomBytes(32).toString('hex');
const cluster = await startCluster({
  storeDatabase: 'temporal_cluster',
  visibilityDatabase: 'temporal_cluster_visibility',
  fresh: process.env.TEMPORAL_FRESH === '1',
  hostTokenKey,
});
const { certs, front } = cluster;
console.log(`Temporal ${cluster.nodes[0]?.version}: nodes ${cluster.nodes.map((n) => n.address).join(', ')}
control plane (workers, CLI):
  TEMPORAL_ADDRESS=${front.controlAddress}
  TEMPORAL_TLS_CERT=${certs.control.certFile}
  TEMPORAL_TLS_KEY=${certs.control.keyFile}
  TEMPORAL_TLS_CA=${certs.caFile}
  TEMPORAL_TLS_SERVER_NAME=${certs.serverName}
  GPU_FLEET_HOST_TOKEN_KEY=${process.env.GPU_FLEET_HOST_TOKEN_KEY ? '(yours)' : hostTokenKey}
hosts (the control worker passes these on, with a token per rental):
  HOST_TEMPORAL_ADDRESS=${front.hostAddress}
  HOST_TEMPORAL_TLS_CA=${certs.caFile}
retired rentals (the servers refuse a label listed here within 10 s; workers/host-token-revocations-main.ts
writes it from the fleet database): GPU_FLEET_REVOKED_HOSTS_FILE=${cluster.revokedHostsFile}
logs: ${[...cluster.nodes.map((n) => n.logFile), front.logFile].join(', ')}`);
const stop = () => void cluster.stop().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
