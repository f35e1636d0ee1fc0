import { readFile } from 'node:fs/promises';
import { z } from 'zod';

/** lotus-bench style c1.json; miner_id and sector_number sent with it must match or the proof fails. */
const C1Schema = z.looseObject({
  SectorNum: z.number().int().nonnegative(),
  Phase1Out: z.string().min(1),
  SectorSize: z.number().int().positive(),
});

export interface C1Input {
  bytes: Buffer;
  sectorNumber: number;
  sectorSize: number;
}

export async function loadC1(file: string): Promise<C1Input> {
  const bytes = await readFile(file);
  const parsed = C1Schema.safeParse(JSON.parse(bytes.toString('utf8')));
  if (!parsed.success) {
    throw new Error(
      `${file} is not a C1 output: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  return { bytes, sectorNumber: parsed.data.SectorNum, sectorSize: parsed.data.SectorSize };
}
