import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/**
 * `npm run test:engine`: the lifecycle suites, unchanged, against the Temporal server on PostgreSQL
 * (docs/production-engine.md) instead of the dev server on SQLite.
 */
export default defineConfig({
  ...base,
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    ...base.test,
    include: [
      'test/engine/**/*.test.ts',
      // Promote, too-slow kill (full batch and early stop), operator override, cancel.
      'test/workflows/lifecycle-outcomes.test.ts',
      // Every host-side failure type of the seeds (daemon, paramfetch, instance, host lost) and the Vast API's.
      'test/workflows/lifecycle-failures.test.ts',
      // A host reporting timings its GPUs cannot produce is killed with ImplausibleResult (docs/security.md).
      'test/workflows/implausible-result.test.ts',
    ],
    exclude: configDefaults.exclude,
    // Order matters: the engine setup exports TEMPORAL_ADDRESS, which the ordinary setup then uses.
    globalSetup: ['test/engine/global-setup.ts', 'test/helpers/global-setup.ts'],
  },
});
