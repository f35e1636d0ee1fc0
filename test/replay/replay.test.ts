import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { describe, expect, it } from 'vitest';
import { replayHistory } from '../../workers/cli/replay.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DIR = path.join(HERE, 'histories');
const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));
const load = (f: string) => historyFromJSON(JSON.parse(readFileSync(path.join(DIR, f), 'utf8')));

describe('recorded histories replay against the current workflow code', () => {
  it('has a recorded history for promotion and for kills', () => {
    // v1-*: recorded before promoted instances were watched (they replay through patched()); the rest: current.
    for (const generation of [(f: string) => f.startsWith('v1-'), (f: string) => !f.startsWith('v1-')]) {
      expect(files.filter(generation).filter((f) => f.includes('promoted-')).length).toBeGreaterThanOrEqual(1);
      expect(files.filter(generation).filter((f) => f.includes('killed-')).length).toBeGreaterThanOrEqual(4);
    }
  });

  it.each(files)('%s', async (file) => {
    const verdict = await replayHistory(load(file), file);
    expect(verdict).toEqual({ ok: true });
  });

  it('reports a determinism violation for an incompatible change', async () => {
    const promoted = files.find((f) => f.includes('promoted-')) ?? 'missing';
    const verdict = await replayHistory(
      load(promoted),
      'promoted-vs-changed',
      path.join(HERE, 'fixtures/changed-lifecycle.ts'),
    );
    expect(verdict).toMatchObject({ ok: false, determinism: true });
  });
});
