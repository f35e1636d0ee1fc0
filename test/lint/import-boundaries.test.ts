import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The project's own eslint.config.mjs, on code that is not in a file: type-aware parsing is off (no such
 * file is in the TypeScript project), and only the rules under test run, so one instance answers in ms.
 */
const eslint = new ESLint({
  cwd: root,
  overrideConfig: [tseslint.configs.disableTypeChecked],
  ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports' || ruleId === 'max-lines-per-function',
});

async function errors(code: string, filePath: string): Promise<Array<{ ruleId: string | null; message: string }>> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, filePath) });
  if (!result) throw new Error(`ESLint returned nothing for ${filePath}`);
  return result.messages.map((m) => ({ ruleId: m.ruleId, message: m.message }));
}

const TYPES_ONLY = expect.objectContaining({
  ruleId: 'no-restricted-imports',
  message: expect.stringContaining('import activities as types only'),
});

describe('workflow code imports activities as types only, at any depth under workflows/', () => {
  for (const dir of ['workflows', 'workflows/lifecycle', 'workflows/lifecycle/deeper']) {
    const up = '../'.repeat(dir.split('/').length);
    const file = `${dir}/x.ts`;
    const from = `${up}activities/vast/activities.js`;

    it(`${file}: a value import of ${from} is refused`, async () => {
      const code = `import { createVastActivities } from '${from}';\nexport const f = createVastActivities;\n`;
      expect(await errors(code, file)).toEqual([TYPES_ONLY]);
    });

    it(`${file}: import type from ${from} passes`, async () => {
      const code = `import type { VastActivities } from '${from}';\nexport type A = VastActivities;\n`;
      expect(await errors(code, file)).toEqual([]);
    });
  }
});

describe('activities/ never imports workers/', () => {
  it('a value import from workers/setup is refused', async () => {
    const code = `import { loadConfig } from '../../workers/setup/config.js';\nexport const f = loadConfig;\n`;
    expect(await errors(code, 'activities/vast/x.ts')).toEqual([
      expect.objectContaining({
        ruleId: 'no-restricted-imports',
        message: expect.stringContaining('never imports workers/'),
      }),
    ]);
  });

  it('so is a type import', async () => {
    const code = `import type { ControlConfig } from '../../workers/setup/config.js';\nexport type C = ControlConfig;\n`;
    expect(await errors(code, 'activities/vast/x.ts')).toHaveLength(1);
  });

  it('an import from workflows/domain passes', async () => {
    const code = `import { FailureType } from '../../workflows/domain/failures.js';\nexport const f = FailureType;\n`;
    expect(await errors(code, 'activities/vast/x.ts')).toEqual([]);
  });
});

describe('functions of workflows/, activities/ and workers/ stay within 80 lines', () => {
  const fn = (lines: number) => `export function f(): number {\n${'  void 0;\n'.repeat(lines - 3)}  return 1;\n}\n`;

  for (const file of ['workflows/lifecycle/x.ts', 'activities/gpu-host/x.ts', 'workers/setup/x.ts']) {
    it(`${file}: 80 lines pass, 81 do not`, async () => {
      expect(await errors(fn(80), file)).toEqual([]);
      expect(await errors(fn(81), file)).toEqual([
        expect.objectContaining({ ruleId: 'max-lines-per-function', message: expect.stringContaining('(81)') }),
      ]);
    });
  }
});
