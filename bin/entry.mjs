// Which CLI the `gpu-fleet` bin runs: the build in dist/ (plain node, nothing compiled at start) when it
// is there and no source it was built from is newer; else the TypeScript through tsx, as in a checkout
// that was never built or was edited since. Plain JavaScript: it runs before anything is compiled.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** The directories `npm run build` compiles the CLI from (tsconfig.build.json). */
export const SOURCE_DIRS = ['workflows', 'activities', 'workers'];

/** The newest modification time (ms) of a .ts file under `dir`; 0 when there is none or no such dir. */
function newestTs(dir) {
  let newest = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestTs(p));
    else if (e.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * `{ run: 'dist', file }` or `{ run: 'tsx', file, why }` for the package at `root`. A build is current when
 * its compiled entry is at least as new as every source file: an image without sources runs its build.
 */
export function chooseEntry(root) {
  const built = path.join(root, 'dist/workers/cli.js');
  const source = path.join(root, 'workers/cli.ts');
  const builtAt = statSync(built, { throwIfNoEntry: false })?.mtimeMs;
  if (builtAt === undefined) return { run: 'tsx', file: source, why: 'no build in dist/' };
  const newest = Math.max(...SOURCE_DIRS.map((d) => newestTs(path.join(root, d))));
  if (newest > builtAt) return { run: 'tsx', file: source, why: 'sources newer than dist/' };
  return { run: 'dist', file: built };
}
