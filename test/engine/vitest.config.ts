import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import base from '../../vitest.e2e.config.js';
import { ENGINE_LIFECYCLE_FILES } from '../tiers.js';

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
      // Promote, failure types, ImplausibleResult: run here only, not also in the e2e tier (test/tiers.ts).
      ...ENGINE_LIFECYCLE_FILES,
    ],
    exclude: configDefaults.exclude,
    // Order matters: the engine setup exports TEMPORAL_ADDRESS, which the ordinary setup then uses.
    globalSetup: ['test/engine/global-setup.ts', 'test/helpers/global-setup.ts'],
  },
});
