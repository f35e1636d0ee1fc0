import path from 'node:path';
import type { Client } from '@temporalio/client';
import { exportHistory } from '../../workers/cli/history.js';

/**
 * With RECORD_HISTORIES_DIR set, a fault test saves the histories it produced (new patches, store
 * waits, steps collected after an outage) for test/replay/histories; without it, nothing is written.
 */
export async function recordHistory(client: Client, workflowId: string, name: string): Promise<void> {
  const dir = process.env.RECORD_HISTORIES_DIR;
  if (!dir) return;
  await exportHistory(client, workflowId, path.join(dir, `${name}.json`));
}
