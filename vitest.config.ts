import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The production engine's group runs on its own server (test/engine/vitest.config.ts, npm run test:engine).
    exclude: [...configDefaults.exclude, 'test/engine/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // Simulated hosts are real processes; two cores do not run several suites of them side by side well.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
    env: { SIM_TIME_SCALE: '0.01' },
  },
});
