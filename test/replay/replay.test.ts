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
  it('has recorded histories of promotion and of kills of several failure types', () => {
    expect(files.filter((f) => f.includes('promoted-')).length).toBeGreaterThanOrEqual(1);
    const killed = files.filter((f) => f.includes('killed-'));
    expect(killed.length).toBeGreaterThanOrEqual(4);
    expect(new Set(killed.map((f) => /killed-([A-Za-z]+)-/.exec(f)?.[1])).size).toBeGreaterThanOrEqual(3);
  });

  it('names no file or worker of the machine that recorded them', () => {
    for (const f of files) {
      const text = readFileSync(path.join(DIR, f), 'utf8');
      expect(text, f).not.toMatch(/\/(work|root|home|tmp)\/|"\d+@[^"]+"/);
    }
  });

  it.each(files)('%s', async (file) => {
    const verdict = await replayHistory(load(file), file);
    expect(verdict).toEqual({ ok: true });
  });

  it('reports a determinism violation for an incompatible change', async () => {
    const promoted = files.find((f) => f.includes('promoted-')) ?? 'missing';
    const verdict = await replayHistory(load(promoted), 'promoted-vs-changed', {
      workflowsPath: path.join(HERE, 'fixtures/changed-lifecycle.ts'),
    });
    expect(verdict).toMatchObject({ ok: false, determinism: true });
  });
});
