import path from 'node:path';
import type { Client } from '@temporalio/client';
import { exportHistory } from '../../workers/cli/history.js';
import { scrubHistoryFile } from '../../infra/dev/history-fixture.js';

/**
 * With RECORD_HISTORIES_DIR set, a fault test saves the histories it produced (store waits, steps
 * collected after an outage) for test/replay/histories; without it, nothing is written. Stack traces
 * and worker identities are scrubbed: they name the machine that ran the test, and replay ignores them.
 */
export async function recordHistory(client: Client, workflowId: string, name: string): Promise<void> {
  const dir = process.env.RECORD_HISTORIES_DIR;
  if (!dir) return;
  const file = path.join(dir, `${name}.json`);
  await exportHistory(client, workflowId, file);
  await scrubHistoryFile(file);
}
