import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/** test/fixtures/nvidia-smi: nvidia-smi as real hosts print it, each naming its source. */
export const SMI_FIXTURE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'nvidia-smi');

const Run = z.object({ exitCode: z.number().int(), stdout: z.string(), stderr: z.string() });
const SmiFixtureSchema = z.object({
  name: z.string(),
  source: z.string().min(20),
  offer: z.object({ gpuName: z.string(), numGpus: z.number().int().positive(), gpuRamMb: z.number().positive() }),
  banner: Run,
  query: Run.optional(),
  expect: z.object({
    outcome: z.enum(['fit', 'unfit', 'unreadable']),
    check: z.string().optional(),
    form: z.enum(['driver', 'kmd']).optional(),
    gpus: z
      .array(
        z.object({
          index: z.number(),
          name: z.string(),
          memoryMiB: z.number().nullable(),
          notGiven: z.string().optional(),
        }),
      )
      .optional(),
    driverVersion: z.string().optional(),
    cudaVersion: z.number().nullable().optional(),
    driverError: z.string().optional(),
  }),
});
export type SmiFixture = z.infer<typeof SmiFixtureSchema> & { file: string };

export function smiFixtures(): SmiFixture[] {
  return readdirSync(SMI_FIXTURE_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const file = path.join(SMI_FIXTURE_DIR, f);
      return { ...SmiFixtureSchema.parse(JSON.parse(readFileSync(file, 'utf8'))), file };
    });
}

export const smiFixture = (name: string): SmiFixture => {
  const f = smiFixtures().find((x) => x.name === name);
  if (!f) throw new Error(`no nvidia-smi fixture ${name}`);
  return f;
};
