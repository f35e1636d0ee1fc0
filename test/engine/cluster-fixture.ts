import { randomBytes } from 'node:crypto';
import type { ConnectionOptions } from '@temporalio/client';
import pg from 'pg';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { type Cluster, startCluster } from '../../infra/temporal/cluster.js';
import type { ProductionServer } from '../../infra/temporal/production-server.js';
import type { ControlConfig } from '../../workers/setup/config.js';
import { type TemporalSecurity, tlsOptions } from '../../workers/setup/temporal-connection.js';

export interface TestCluster {
  cluster: Cluster;
  /** The control plane's TEMPORAL_TLS_* settings (mTLS to the frontends through the front). */
  controlSecurity: TemporalSecurity;
  controlTls: NonNullable<ConnectionOptions['tls']>;
  /** GPU_FLEET_HOST_TOKEN_KEY of the servers and the control worker: each rental's token is signed with it. */
  hostTokenKey: string;
  /** What the control worker needs for rented hosts: the host listener and the CA (HOST_*), the token key. */
  hostSettings: Partial<ControlConfig>;
  /**
   * Live members (membership host:port) per role in the shared store's cluster_membership: heartbeat
   * in the last 60 s and, with `startedAfter`, a session that began after it (a restarted process).
   */
  liveMembers(startedAfter?: Date): Promise<Record<string, string[]>>;
  /** host:port of the history service that owns this workflow's shard, from the store. */
  shardOwner(workflowId: string): Promise<string>;
  /** host:port of a node's history service, from its generated config. */
  historyAddress(node: ProductionServer): string;
  stop(): Promise<void>;
}

const ServerConfig = z.object({
  services: z.object({ history: z.object({ rpc: z.object({ grpcPort: z.number().int() }) }) }),
});

/** Two server processes on fresh databases named after this run's test database, mTLS and the front. */
export async function startTestCluster(tag: string): Promise<TestCluster> {
  const base = process.env.TEST_PG_DATABASE ?? 'gpufleet_test';
  const storeDatabase = `${base}_${tag}`;
  const hostTokenKey = randomBytes(32).toString('hex');
  const cluster = await startCluster({
    storeDatabase,
    visibilityDatabase: `${storeDatabase}_vis`,
    fresh: true,
    hostTokenKey,
    log: () => undefined,
  });
  const { certs, front } = cluster;
  const controlSecurity: TemporalSecurity = {
    TEMPORAL_TLS_CERT: certs.control.certFile,
    TEMPORAL_TLS_KEY: certs.control.keyFile,
    TEMPORAL_TLS_CA: certs.caFile,
    TEMPORAL_TLS_SERVER_NAME: certs.serverName,
  };
  const controlTls = tlsOptions(controlSecurity);
  if (!controlTls) throw new Error('no TLS options from the control settings');
  const pgUrl = process.env.TEMPORAL_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
  const store = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: `${pgUrl}/${storeDatabase}` });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  return {
    cluster,
    controlSecurity,
    controlTls,
    hostTokenKey,
    hostSettings: {
      HOST_TEMPORAL_ADDRESS: front.hostAddress,
      HOST_TEMPORAL_TLS_CA: certs.caFile,
      GPU_FLEET_HOST_TOKEN_KEY: hostTokenKey,
    },
    async liveMembers(startedAfter?: Date) {
      return store(async (client) => {
        // Roles as the server numbers them (common/primitives): 1 frontend, 2 history, 3 matching, 4 worker.
        const r = await client.query<{ role: number; member: string }>(
          `SELECT DISTINCT role, rpc_address || ':' || rpc_port AS member FROM cluster_membership
            WHERE last_heartbeat > now() AT TIME ZONE 'UTC' - interval '60 seconds'
              AND session_start > $1::timestamptz AT TIME ZONE 'UTC'
            ORDER BY member`,
          [(startedAfter ?? new Date(0)).toISOString()],
        );
        const names: Record<number, string> = { 1: 'frontend', 2: 'history', 3: 'matching', 4: 'worker' };
        const out: Record<string, string[]> = {};
        for (const row of r.rows) (out[names[row.role] ?? String(row.role)] ??= []).push(row.member);
        return out;
      });
    },
    async shardOwner(workflowId: string) {
      return store(async (client) => {
        // ShardInfo (proto3) starts with its owner: the history service's host:port and a session suffix.
        const r = await client.query<{ owner: string | null }>(
          `SELECT substring(encode(s.data, 'escape') from '127\.0\.0\.1:[0-9]+') AS owner
             FROM executions e JOIN shards s USING (shard_id) WHERE e.workflow_id = $1`,
          [workflowId],
        );
        const owner = r.rows[0]?.owner;
        if (!owner) throw new Error(`no shard owner found for ${workflowId}`);
        return owner;
      });
    },
    historyAddress(node: ProductionServer) {
      const config = ServerConfig.parse(
        JSON.parse(readFileSync(path.join(node.runDir, 'config', 'production.yaml'), 'utf8')),
      );
      return `127.0.0.1:${config.services.history.rpc.grpcPort}`;
    },
    stop: () => cluster.stop(),
  };
}
