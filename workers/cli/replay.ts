import { readFile } from 'node:fs/promises';
import type { Client } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { DeterminismViolationError } from '@temporalio/workflow';
import { Worker } from '@temporalio/worker';
import { WORKFLOWS_PATH } from '../control-worker-factory.js';

export type ReplayVerdict = { ok: true } | { ok: false; determinism: boolean; message: string };

/** Replays one history against the workflow code at `workflowsPath` (the current code by default). */
export async function replayHistory(
  history: unknown,
  workflowId: string,
  workflowsPath = WORKFLOWS_PATH,
): Promise<ReplayVerdict> {
  try {
    await Worker.runReplayHistory({ workflowsPath, replayName: `replay-${workflowId}` }, history, workflowId);
    return { ok: true };
  } catch (err) {
    const determinism =
      err instanceof DeterminismViolationError || (err instanceof Error && err.name === 'DeterminismViolationError');
    return { ok: false, determinism, message: err instanceof Error ? err.message : String(err) };
  }
}

/** A history from a JSON file (as `history export` or the UI's download writes it) or from the server by id. */
export async function loadHistory(
  source: string,
  client: () => Promise<Client>,
): Promise<{ history: unknown; workflowId: string }> {
  if (source.endsWith('.json')) {
    const json: unknown = JSON.parse(await readFile(source, 'utf8'));
    return { history: historyFromJSON(json), workflowId: source.replace(/^.*\//, '').replace(/\.json$/, '') };
  }
  const history = await (await client()).workflow.getHandle(source).fetchHistory();
  return { history, workflowId: source };
}
