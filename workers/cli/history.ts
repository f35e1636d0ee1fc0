import { writeFile } from 'node:fs/promises';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';

/** Writes a workflow's full history as the JSON the UI downloads and replay reads. */
export async function exportHistory(client: Client, workflowId: string, file: string): Promise<number> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  await writeFile(file, historyToJSON(history) + '\n');
  return history.events?.length ?? 0;
}
