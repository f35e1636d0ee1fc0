import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { exportHistory } from '../../workers/cli/history.js';

/**
 * With RECORD_HISTORIES_DIR set, a fault test saves the histories it produced (new patches, store
 * waits, steps collected after an outage) for test/replay/histories; without it, nothing is written.
 * Stack traces are blanked: they name files of the machine that ran the test, and replay ignores them.
 */
export async function recordHistory(client: Client, workflowId: string, name: string): Promise<void> {
  const dir = process.env.RECORD_HISTORIES_DIR;
  if (!dir) return;
  const file = path.join(dir, `${name}.json`);
  await exportHistory(client, workflowId, file);
  await writeFile(file, JSON.stringify(blankStackTraces(JSON.parse(await readFile(file, 'utf8'))), null, 2) + '\n');
}

export function blankStackTraces(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(blankStackTraces);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === 'stackTrace' && typeof v === 'string' ? '' : blankStackTraces(v)]),
  );
}
