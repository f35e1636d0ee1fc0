import { readFileSync } from 'node:fs';
import { parse } from 'smol-toml';
import { z } from 'zod';

/** The daemon config keys the simulator reads (the subset the GPU-host worker writes). */
export interface DaemonFileConfig {
  listen: string;
  paramCache: string;
  partitionWorkers: number;
}

const FileSchema = z.object({
  daemon: z.object({ listen: z.string().min(1) }),
  srs: z.object({ param_cache: z.string().min(1) }),
  synthesis: z.object({ partition_workers: z.number().int().positive() }),
});

/** Reads the daemon's TOML as the daemon does; a missing or wrong key fails naming it. */
export function readDaemonConfig(file: string): DaemonFileConfig {
  let doc: unknown;
  try {
    doc = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: not valid TOML: ${err instanceof Error ? err.message : String(err)}`);
  }
  const res = FileSchema.safeParse(doc);
  if (!res.success) {
    const why = res.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`${file}: ${why}`);
  }
  const { daemon, srs, synthesis } = res.data;
  return { listen: daemon.listen, paramCache: srs.param_cache, partitionWorkers: synthesis.partition_workers };
}
