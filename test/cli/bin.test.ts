import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript without types: the bin runs before anything is compiled
import { chooseEntry } from '../../bin/entry.mjs';

type Choice = { run: 'dist' | 'tsx'; file: string; why?: string };
const choose = chooseEntry as (root: string) => Choice;

/** A package tree with the given files, each modified at `at` seconds after the epoch. */
function tree(files: Record<string, number>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'cli-bin-'));
  for (const [rel, at] of Object.entries(files)) {
    const p = path.join(root, rel);
    mkdirSync(path.dirname(p), { recursive: true });
    writeFileSync(p, '');
    utimesSync(p, at, at);
  }
  return root;
}

describe('the gpu-fleet bin runs the build when it is current', () => {
  it('runs dist/ when no source is newer; an image without sources runs its build', () => {
    const root = tree({ 'dist/workers/cli.js': 2000, 'workers/cli.ts': 1000, 'workflows/domain/types.ts': 1500 });
    expect(choose(root)).toEqual({ run: 'dist', file: path.join(root, 'dist/workers/cli.js') });
    expect(choose(tree({ 'dist/workers/cli.js': 2000 })).run).toBe('dist');
  });

  it('falls back to tsx without a build, or when any source under workflows, activities or workers is newer', () => {
    const none = tree({ 'workers/cli.ts': 1000 });
    expect(choose(none)).toEqual({ run: 'tsx', file: path.join(none, 'workers/cli.ts'), why: 'no build in dist/' });
    for (const edited of ['workers/cli/resolve.ts', 'workflows/domain/types.ts', 'activities/store/queries.ts']) {
      const root = tree({ 'dist/workers/cli.js': 2000, 'workers/cli.ts': 1000, [edited]: 3000 });
      expect(choose(root), edited).toMatchObject({ run: 'tsx', why: 'sources newer than dist/' });
    }
    // Not a source of the build: a newer test or doc does not make the build stale.
    expect(choose(tree({ 'dist/workers/cli.js': 2000, 'test/x.test.ts': 3000, 'docs/cli.md': 3000 })).run).toBe('dist');
  });
});
