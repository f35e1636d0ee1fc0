#!/usr/bin/env node
// The `gpu-fleet` command (package.json "bin"), from any directory: the built CLI when dist/ is current
// (entry.mjs), else the TypeScript through tsx. GPU_FLEET_CLI_DEBUG=1 says which ran, on stderr.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chooseEntry } from './entry.mjs';

const entry = chooseEntry(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'));
if (process.env.GPU_FLEET_CLI_DEBUG === '1')
  console.error(`gpu-fleet: running ${entry.file}${entry.why ? ` through tsx (${entry.why})` : ''}`);
if (entry.run === 'tsx') {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(pathToFileURL(entry.file).href);
