/**
 * Which test files start real processes (simulated hosts, servers of their own, the built product, a
 * browser): the end-to-end tier (`npm run test:e2e`). Everything else is the fast tier (`npm test`).
 * docs/testing.md lists every file with its tier.
 */
export const E2E_FILES = [
  'test/workflows/**/*.test.ts',
  'test/faults/**/*.test.ts',
  'test/cli/cli.test.ts',
  // Needs promtool, which .ci/run installs (Debian's prometheus package); a fresh clone may lack it.
  'test/observability/alert-rules.test.ts',
  'test/observability/logging.test.ts',
  'test/observability/prometheus-queries.test.ts',
  'test/observability/webhook.test.ts',
  'test/security/codec.test.ts',
  'test/ui/**/*.test.ts',
  'test/build/**/*.test.ts',
  'test/demo/**/*.test.ts',
];

/**
 * The lifecycle suites the engine group runs on the production engine (test/engine/vitest.config.ts).
 * CI runs them there only: the same tests on the dev server would prove nothing more.
 */
export const ENGINE_LIFECYCLE_FILES = [
  // Promote, too-slow kill (full batch and early stop), operator override, cancel.
  'test/workflows/lifecycle-outcomes.test.ts',
  // Every host-side failure type of the seeds (daemon, paramfetch, instance, host lost) and the Vast API's.
  'test/workflows/lifecycle-failures.test.ts',
  // A host reporting timings its GPUs cannot produce is killed with ImplausibleResult (docs/security.md).
  'test/workflows/implausible-result.test.ts',
];
