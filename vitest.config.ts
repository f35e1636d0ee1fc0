import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // Simulated hosts are real processes; two cores do not run several suites of them side by side well.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
    env: { SIM_TIME_SCALE: '0.01' },
  },
});
