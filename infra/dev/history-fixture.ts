import { readFile, writeFile } from 'node:fs/promises';

/** What a recorded worker identity (`pid@hostname`) becomes in a fixture. */
export const FIXTURE_IDENTITY = 'recorded-worker';

/** A worker identity, or the sticky task queue named after it: `pid@hostname[-uuid]`. */
const WORKER_NAMED = /^\d+@\S+$/;

/**
 * Makes an exported history fit to commit as a replay fixture: stack traces blanked (they name files of
 * the machine that ran it) and worker identities and sticky queues (`pid@hostname…`) replaced. Replay
 * reads neither.
 */
export function scrubHistory(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(scrubHistory);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => {
      if (k === 'stackTrace' && typeof v === 'string') return [k, ''];
      if (typeof v === 'string' && (k === 'identity' ? v !== '' : WORKER_NAMED.test(v))) return [k, FIXTURE_IDENTITY];
      return [k, scrubHistory(v)];
    }),
  );
}

/** Rewrites an exported history file in place, scrubbed. */
export async function scrubHistoryFile(file: string): Promise<void> {
  const json: unknown = JSON.parse(await readFile(file, 'utf8'));
  await writeFile(file, JSON.stringify(scrubHistory(json), null, 2) + '\n');
}
