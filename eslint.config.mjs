// @ts-check
import tseslint from 'typescript-eslint';

// The development harness (simulators, host farm, bench, demo, sim stack, embedded Postgres, test
// pollers, tests) may import the product; the product never imports it. infra/sql is product.
const harness = {
  group: [
    '**/infra/sim',
    '**/infra/sim/**',
    '**/infra/bench',
    '**/infra/bench/**',
    '**/infra/dev',
    '**/infra/dev/**',
    '**/infra/db',
    '**/infra/db/**',
    '**/test/**',
  ],
  message: 'the product (workflows/, activities/, workers/) must not import the development harness',
};

// The workflow sandbox refuses Node built-ins and non-workflow Temporal packages; catch it at edit time.
const sandbox = [
  {
    group: ['node:*', 'fs', 'path', 'child_process', 'net', 'http', 'os', 'crypto'],
    message: 'workflows run in a deterministic sandbox',
  },
  {
    group: ['@temporalio/activity', '@temporalio/client', '@temporalio/worker', '@temporalio/testing', 'pg', '@grpc/*'],
    message: 'not available in the workflow sandbox',
  },
];

// workflows/domain/ is the pure core every layer imports: it imports nothing else of ours (a relative
// path that climbs out of the folder) and no Temporal runtime, so the CLI, activities and tests get it
// without the workflow sandbox. The regex depends on how deep the file sits under workflows/domain/.
const domainRule = (depth, temporal) => ({
  'no-restricted-imports': [
    'error',
    {
      patterns: [
        ...sandbox,
        harness,
        {
          regex: `^(\\.\\./){${depth + 1}}`,
          message: 'workflows/domain imports nothing of ours outside workflows/domain',
        },
        { group: temporal, message: 'workflows/domain is pure: no Temporal packages' },
      ],
    },
  ],
});

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'test-artifacts/**'] },
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: 'error',
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...sandbox,
            // At any depth under workflows/ (../activities, ../../activities, ...).
            { regex: '^(\\.\\./)+activities/', allowTypeImports: true, message: 'import activities as types only' },
            harness,
          ],
        },
      ],
    },
  },
  // Later entries replace the rule for these files, so each repeats the sandbox and harness patterns.
  { files: ['workflows/domain/*.ts'], rules: domainRule(0, ['@temporalio/*']) },
  { files: ['workflows/domain/*/*.ts'], rules: domainRule(1, ['@temporalio/*']) },
  {
    // The typed search-attribute keys are @temporalio/common values (defineSearchAttributeKey), the SDK's
    // runtime-neutral package that workflow, client and activity code all share.
    files: ['workflows/domain/search-attributes.ts'],
    rules: domainRule(0, ['@temporalio/*', '!@temporalio/common']),
  },
  {
    // workflows/ has its own list above, which includes the harness (a later entry would replace it).
    files: ['workers/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [harness] }] },
  },
  {
    // Workers wire activities up; an activity that imported a worker module would climb back up.
    files: ['activities/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            harness,
            { regex: '^(\\.\\./)+workers(/|$)', message: 'activities/ never imports workers/: move the code down' },
          ],
        },
      ],
    },
  },
  {
    // Small functions with one job; counted as ESLint does by default (blank lines and comments included).
    files: ['workflows/**/*.ts', 'activities/**/*.ts', 'workers/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80 }] },
  },
  {
    // The same rule for the simulators, file by file as each is split into small functions.
    files: [
      'infra/sim/vast/server.ts',
      'infra/sim/vast/state.ts',
      'infra/sim/vast/chaos.ts',
      'infra/sim/vast/routes.ts',
      'infra/sim/vast/routes-offers.ts',
      'infra/sim/vast/routes-create.ts',
      'infra/sim/vast/routes-instances.ts',
      'infra/sim/vast/sim-control.ts',
      'infra/sim/vast/instance-life.ts',
      'infra/sim/vast/instance-view.ts',
      'infra/sim/cuzk/server.ts',
      'infra/sim/cuzk/handlers.ts',
      'infra/sim/cuzk/engine.ts',
      'infra/sim/farm/farm.ts',
      'infra/sim/farm/state.ts',
      'infra/sim/farm/hosts.ts',
      'infra/sim/farm/standins.ts',
    ],
    rules: { 'max-lines-per-function': ['error', { max: 80 }] },
  },
  { files: ['**/*.mjs'], ...tseslint.configs.disableTypeChecked },
);
