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
    // The workflow sandbox refuses Node built-ins and non-workflow Temporal packages; catch it at edit time.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'child_process', 'net', 'http', 'os', 'crypto'],
              message: 'workflows run in a deterministic sandbox',
            },
            {
              group: [
                '@temporalio/activity',
                '@temporalio/client',
                '@temporalio/worker',
                '@temporalio/testing',
                'pg',
                '@grpc/*',
              ],
              message: 'not available in the workflow sandbox',
            },
            {
              group: ['../activities/*', '../activities/**'],
              allowTypeImports: true,
              message: 'import activities as types only',
            },
            harness,
          ],
        },
      ],
    },
  },
  {
    // workflows/ has its own list above, which includes the harness (a later entry would replace it).
    files: ['activities/**/*.ts', 'workers/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [harness] }] },
  },
  { files: ['**/*.mjs'], ...tseslint.configs.disableTypeChecked },
);
