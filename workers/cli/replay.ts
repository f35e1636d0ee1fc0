import { readFile } from 'node:fs/promises';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { DeterminismViolationError } from '@temporalio/workflow';
import { Worker } from '@temporalio/worker';
import { type WorkflowSource, workflowSource } from '../setup/workflow-source.js';
import { CliError } from './context.js';

type History = temporal.api.history.v1.IHistory;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export type ReplayVerdict = { ok: true } | { ok: false; determinism: boolean; message: string };

/** Replays one history against the given workflow code (by default the code this CLI runs: the build's bundle or the sources). */
export async function replayHistory(
  history: unknown,
  workflowId: string,
  source: WorkflowSource = workflowSource(),
): Promise<ReplayVerdict> {
  try {
    await Worker.runReplayHistory({ ...source, replayName: `replay-${workflowId}` }, history, workflowId);
    return { ok: true };
  } catch (err) {
    const determinism =
      err instanceof DeterminismViolationError || (err instanceof Error && err.name === 'DeterminismViolationError');
    return { ok: false, determinism, message: err instanceof Error ? err.message : String(err) };
  }
}

function closes(e: HistoryEvent): boolean {
  return Boolean(
    e.workflowExecutionCompletedEventAttributes ??
    e.workflowExecutionFailedEventAttributes ??
    e.workflowExecutionTimedOutEventAttributes ??
    e.workflowExecutionCanceledEventAttributes ??
    e.workflowExecutionTerminatedEventAttributes ??
    e.workflowExecutionContinuedAsNewEventAttributes,
  );
}

/**
 * Refuses a history replay cannot judge: empty, not starting at the workflow's start, with gaps, or
 * (unless it is a running workflow's) ending before the workflow closed — a file cut in half would
 * otherwise replay "OK", because replay only checks the commands the history holds.
 */
export function checkComplete(history: History, opts: { running: boolean }): void {
  const events = history.events ?? [];
  const first = events[0];
  if (!first) throw new CliError('the history holds no events: nothing to replay');
  if (!first.workflowExecutionStartedEventAttributes || Number(first.eventId) !== 1)
    throw new CliError(`the history does not begin with the workflow's start (event 1): it is cut at the front`);
  for (let i = 1; i < events.length; i++) {
    if (Number(events[i]?.eventId) !== i + 1)
      throw new CliError(`the history skips from event ${i} to event ${String(events[i]?.eventId)}: it is not whole`);
  }
  const last = events[events.length - 1]!;
  if (!opts.running && !closes(last))
    throw new CliError(
      `the history ends at event ${String(last.eventId)} before the workflow closed: a cut file cannot be judged ` +
        `(pass --partial for a running workflow's export, or replay the workflow by id)`,
    );
}

/** A history from a JSON file (as `history export` or the UI's download writes it) or from the server by id. */
export async function loadHistory(
  source: string,
  client: () => Promise<Client>,
): Promise<{ history: History; workflowId: string; running: boolean }> {
  if (source.endsWith('.json')) {
    let json: unknown;
    try {
      json = JSON.parse(await readFile(source, 'utf8'));
    } catch (err) {
      throw new CliError(`cannot read ${source} as JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    let history: History;
    try {
      history = historyFromJSON(json);
    } catch (err) {
      throw new CliError(`${source} is not a Temporal history: ${err instanceof Error ? err.message : String(err)}`);
    }
    return { history, workflowId: source.replace(/^.*\//, '').replace(/\.json$/, ''), running: false };
  }
  const handle = (await client()).workflow.getHandle(source);
  const [history, desc] = await Promise.all([handle.fetchHistory(), handle.describe()]);
  return { history, workflowId: source, running: desc.status.name === 'RUNNING' };
}
