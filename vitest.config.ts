import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { E2E_FILES } from './test/tiers.js';

/**
 * The fast tier, `npm test`: policy, simulator conformance, activities, stub-activity workflows, store,
 * replay — files that start no simulated host. They share one dev server and database but nothing
 * else, so they run side by side; most of their time is waiting on the server, not the CPU.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The end-to-end tier (vitest.e2e.config.ts) and the engine group (test/engine/vitest.config.ts).
    exclude: [...configDefaults.exclude, 'test/engine/**', ...E2E_FILES],
    globalSetup: ['test/helpers/global-setup.ts'],
    fileParallelism: true,
    // Files share a worker's module cache: the workflow bundle (test/logic/harness.ts) and tsx's transforms are
    // made once per worker, not once per file. No fast-tier file relies on fresh module state.
    isolate: false,
    maxWorkers: Math.max(3, availableParallelism()),
    testTimeout: 60_000,
    hookTimeout: 120_000,
    env: { SIM_TIME_SCALE: '0.01' },
  },
});
