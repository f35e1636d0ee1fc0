import { createRequire } from 'node:module';
import type * as TemporalClient from '@temporalio/client';

/**
 * The Temporal client SDK, loaded with `require`: imported from ESM, Node lexes a CommonJS package and
 * every module it re-exports for their export names, about 70 ms of each CLI start for this one (bench:
 * `npm run bench -- --only cli`). Types still come from the package itself.
 */
export const sdk = createRequire(import.meta.url)('@temporalio/client') as typeof TemporalClient;
