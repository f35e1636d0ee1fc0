import type { Client, Connection, ConnectionOptions } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type pg from 'pg';
import { CONTROL_TASK_QUEUE } from '../../workflows/domain/task-queues.js';
import { sdk } from './sdk.js';

/** A refusal or failure the operator must read; the CLI prints the message and exits with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export const DEFAULT_ADDRESS = '127.0.0.1:7233';

/** What TemporalSecuritySchema reads (workers/setup/temporal-connection.ts); test/cli/defaults.test.ts keeps them one list. */
export const SECURITY_VARIABLES = [
  'TEMPORAL_TLS_CERT',
  'TEMPORAL_TLS_KEY',
  'TEMPORAL_TLS_CA',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_API_KEY',
  'PAYLOAD_KEYS',
  'PAYLOAD_KEY_ID',
] as const;

/**
 * The connection's options and data converter from the environment. A plaintext server without payload
 * keys (the dev server) has nothing to parse, so the schema's module and zod (~70 ms of a CLI start) stay
 * unloaded; with any of them set, the workers' own schema and functions decide, as for the workers.
 */
async function connectionSetup(
  address: string,
): Promise<{ options: ConnectionOptions & { address: string }; dataConverter: DataConverter }> {
  if (SECURITY_VARIABLES.every((k) => !process.env[k])) return { options: { address }, dataConverter: {} };
  const tc = await import('../setup/temporal-connection.js');
  const security = tc.TemporalSecuritySchema.parse(process.env);
  return { options: tc.connectionOptions(address, security), dataConverter: tc.dataConverter(security) };
}

/** One connection per CLI run, opened on first use so `--help` and usage errors never need a server. */
export class CliContext {
  private conn: Connection | null = null;
  private client: Client | null = null;
  private pool: pg.Pool | null = null;
  readonly taskQueue = process.env.CONTROL_TASK_QUEUE ?? CONTROL_TASK_QUEUE;
  readonly operator = process.env.USER ?? 'operator';
  readonly namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
  readonly address = process.env.TEMPORAL_ADDRESS ?? DEFAULT_ADDRESS;

  async temporal(): Promise<Client> {
    if (this.client) return this.client;
    const { options, dataConverter } = await connectionSetup(this.address);
    try {
      this.conn = await sdk.Connection.connect({ ...options, connectTimeout: '5s' });
    } catch (err) {
      const from = process.env.TEMPORAL_ADDRESS ? 'TEMPORAL_ADDRESS' : `the default; set TEMPORAL_ADDRESS`;
      throw new CliError(
        `cannot reach the Temporal server at ${this.address} (${from}): ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    this.client = new sdk.Client({
      connection: this.conn,
      namespace: this.namespace,
      dataConverter,
    });
    return this.client;
  }

  /**
   * The control worker's Postgres, for the reads (machines list, report, logs): DATABASE_URL, the same
   * variable the control worker reads; opened on first use, one connection.
   */
  async store(): Promise<pg.Pool> {
    if (this.pool) return this.pool;
    const url = process.env.DATABASE_URL;
    if (!url)
      throw new CliError(
        "DATABASE_URL is not set: this command reads the fleet's store; set it to the control worker's Postgres URL",
        2,
      );
    const where = storeAddress(url);
    if (where === null) throw new CliError('DATABASE_URL is not a postgres:// URL', 2);
    const { createPool } = await import('../../activities/store/pool.js');
    const pool = createPool(url, 1);
    try {
      await pool.query('SELECT 1');
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw new CliError(
        `cannot reach the store at ${where} (DATABASE_URL): ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    this.pool = pool;
    return pool;
  }

  /** Where the Temporal UI is: TEMPORAL_UI_URL, or a local dev server's UI on 8233 next to 7233. */
  uiBase(): string | null {
    return process.env.TEMPORAL_UI_URL ?? (this.address === DEFAULT_ADDRESS ? 'http://127.0.0.1:8233' : null);
  }

  /** The Temporal UI page of a workflow, when TEMPORAL_UI_URL says where the UI is. */
  uiLink(workflowId: string): string | null {
    const ui = this.uiBase();
    if (!ui) return null;
    return `${ui.replace(/\/$/, '')}/namespaces/${encodeURIComponent(this.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  }

  async close(): Promise<void> {
    await Promise.all([this.conn?.close(), this.pool?.end()]);
  }
}

/** host:port/database of a Postgres URL, never its user or password; null when it is not one. */
export function storeAddress(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') return null;
  return `${u.host}${u.pathname}`;
}

/** Prints `data` as JSON when --json was given, else the human text. */
export function output(json: boolean | undefined, data: unknown, human: () => string): void {
  console.log(json ? JSON.stringify(data, null, 2) : human());
}
