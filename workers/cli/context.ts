import { Client, Connection } from '@temporalio/client';
import { CONTROL_TASK_QUEUE } from '../../workflows/domain/task-queues.js';
import { connectionOptions, dataConverter, TemporalSecuritySchema } from '../setup/temporal-connection.js';

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

/** One connection per CLI run, opened on first use so `--help` and usage errors never need a server. */
export class CliContext {
  private conn: Connection | null = null;
  private client: Client | null = null;
  readonly taskQueue = process.env.CONTROL_TASK_QUEUE ?? CONTROL_TASK_QUEUE;
  readonly operator = process.env.USER ?? 'operator';
  readonly namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
  readonly address = process.env.TEMPORAL_ADDRESS ?? DEFAULT_ADDRESS;

  async temporal(): Promise<Client> {
    if (this.client) return this.client;
    const security = TemporalSecuritySchema.parse(process.env);
    try {
      this.conn = await Connection.connect({ ...connectionOptions(this.address, security), connectTimeout: '5s' });
    } catch (err) {
      const from = process.env.TEMPORAL_ADDRESS ? 'TEMPORAL_ADDRESS' : `the default; set TEMPORAL_ADDRESS`;
      throw new CliError(
        `cannot reach the Temporal server at ${this.address} (${from}): ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    this.client = new Client({
      connection: this.conn,
      namespace: this.namespace,
      dataConverter: dataConverter(security),
    });
    return this.client;
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
    await this.conn?.close();
  }
}

/** Prints `data` as JSON when --json was given, else the human text. */
export function output(json: boolean | undefined, data: unknown, human: () => string): void {
  console.log(json ? JSON.stringify(data, null, 2) : human());
}
