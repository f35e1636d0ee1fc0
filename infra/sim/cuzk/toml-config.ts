import { readFileSync } from 'node:fs';

/** The daemon config keys the simulator reads (the subset the GPU-host worker writes). */
export interface DaemonFileConfig {
  listen: string;
  paramCache: string;
  partitionWorkers: number;
}

export function readDaemonConfig(file: string): DaemonFileConfig {
  const text = readFileSync(file, 'utf8');
  const get = (key: string) => new RegExp(`^\\s*${key}\\s*=\\s*"?([^"\\n]+)"?`, 'm').exec(text)?.[1]?.trim();
  const listen = get('listen');
  const paramCache = get('param_cache');
  const pw = Number(get('partition_workers') ?? '');
  if (!listen || !paramCache || !Number.isInteger(pw) || pw < 1) {
    throw new Error(`${file}: needs listen, param_cache and a positive partition_workers`);
  }
  return { listen, paramCache, partitionWorkers: pw };
}
