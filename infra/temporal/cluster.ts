import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type ClusterCerts, makeClusterCerts } from './certs.js';
import { cacheDir } from './ensure-cli.js';
import { type Front, startFront } from './front.js';
import { type ProductionServer, startProductionServer } from './production-server.js';

/**
 * Two Temporal server processes on one PostgreSQL store, each a full server (frontend, history,
 * matching, worker) with its own ports, members of one ring through the store's cluster_membership;
 * mTLS on both frontends; HAProxy in front (infra/temporal/front.ts); our authorizer in each server
 * (the control plane by its certificate, hosts by their tokens). docs/production-engine.md.
 */
export interface ClusterOptions {
  storeDatabase: string;
  visibilityDatabase: string;
  /** Drop both databases first. */
  fresh?: boolean;
  /** GPU_FLEET_HOST_TOKEN_KEY of the servers (and of the control worker, which mints host tokens with it). */
  hostTokenKey: string;
  nodes?: number;
  log?: (msg: string) => void;
}

export interface Cluster {
  nodes: ProductionServer[];
  front: Front;
  certs: ClusterCerts;
  /** The servers' GPU_FLEET_REVOKED_HOSTS_FILE: a label written here is refused within 10 s. */
  revokedHostsFile: string;
  stop(): Promise<void>;
}

export async function startCluster(o: ClusterOptions): Promise<Cluster> {
  const dir = path.join(cacheDir(), 'production-engine', o.storeDatabase, 'cluster');
  mkdirSync(dir, { recursive: true });
  const certs = makeClusterCerts(dir);
  const revokedHostsFile = path.join(dir, 'revoked-hosts');
  writeFileSync(revokedHostsFile, '');
  const tls = {
    caFile: certs.caFile,
    certFile: certs.server.certFile,
    keyFile: certs.server.keyFile,
    clientCertFile: certs.control.certFile,
    clientKeyFile: certs.control.keyFile,
    controlSubjects: [certs.control.subject],
    serverName: certs.serverName,
  };
  const nodes: ProductionServer[] = [];
  let front: Front | undefined;
  const stop = async () => {
    await front?.stop();
    await Promise.all(nodes.map((n) => n.stop()));
  };
  try {
    for (let i = 1; i <= (o.nodes ?? 2); i++) {
      // One at a time: the first creates (or upgrades) the schema, the next ones find it ready.
      nodes.push(
        await startProductionServer({
          storeDatabase: o.storeDatabase,
          visibilityDatabase: o.visibilityDatabase,
          fresh: i === 1 && (o.fresh ?? false),
          node: `node${i}`,
          tls,
          hostTokenKey: o.hostTokenKey,
          revokedHostsFile,
          ...(o.log ? { log: o.log } : {}),
        }),
      );
    }
    front = await startFront({
      frontends: nodes.map((n) => n.address),
      caFile: certs.caFile,
      serverName: certs.serverName,
      hostFront: certs.hostFront,
      dir,
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { nodes, front, certs, revokedHostsFile, stop };
}
