import { configDefaults, defineConfig } from 'vitest/config';
import { E2E_FILES, ENGINE_LIFECYCLE_FILES } from './test/tiers.js';

/**
 * The end-to-end tier, `npm run test:e2e`: real processes — simulated hosts, servers a test stops,
 * the built product, a browser. The engine group (test/engine/vitest.config.ts) builds on this config.
 */
export default defineConfig({
  test: {
    include: E2E_FILES,
    exclude: [...configDefaults.exclude, ...ENGINE_LIFECYCLE_FILES],
    globalSetup: ['test/helpers/global-setup.ts'],
    // Simulated hosts are real processes; two cores do not run several suites of them side by side well.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
    env: { SIM_TIME_SCALE: '0.01' },
  },
});
