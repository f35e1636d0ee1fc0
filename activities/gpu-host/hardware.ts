import { z } from 'zod';

export interface Gpu {
  index: number;
  name: string;
  memoryMiB: number;
  uuid?: string;
}

export interface Hardware {
  gpus: Gpu[];
  ramMiB: number;
  cpus: number;
}

const GpuRow = z.object({
  index: z.coerce.number().int().nonnegative(),
  name: z.string().min(1),
  memoryMiB: z.coerce.number().positive(),
  uuid: z.string().optional(),
});

/** The query detect-hardware asks nvidia-smi at the image's start (the fitness gate's reader: nvidia-smi.ts). */
export const NVIDIA_SMI_GPU_QUERY = ['--query-gpu=index,name,memory.total,uuid', '--format=csv,noheader,nounits'];

/**
 * Parses `nvidia-smi --query-gpu=index,name,memory.total,uuid --format=csv,noheader,nounits`
 * (also accepts the header line and "24564 MiB" units, which older scripts request).
 */
export function parseNvidiaSmiCsv(text: string): Gpu[] {
  const gpus: Gpu[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || /^index\s*,/i.test(line)) continue;
    const [index, name, memory, uuid] = line.split(',').map((c) => c.trim());
    const parsed = GpuRow.safeParse({
      index,
      name,
      memoryMiB: memory?.replace(/\s*MiB$/i, ''),
      uuid: uuid || undefined,
    });
    if (!parsed.success)
      throw new Error(`unparseable nvidia-smi line "${line}": ${parsed.error.issues[0]?.message ?? ''}`);
    gpus.push(parsed.data);
  }
  return gpus;
}

/** MemTotal from /proc/meminfo, in MiB. */
export function parseMeminfo(text: string): number {
  const m = /^MemTotal:\s+(\d+)\s+kB/m.exec(text);
  if (!m?.[1]) throw new Error('MemTotal not found in /proc/meminfo');
  return Math.floor(Number(m[1]) / 1024);
}

/**
 * A cgroup v2 `memory.max` (or v1 `memory.limit_in_bytes`) in MiB; null when unlimited. The daemon's
 * memory budget must come from this, not from the host's RAM, or it OOMs inside a container.
 */
export function parseCgroupLimit(text: string): number | null {
  const v = text.trim();
  if (v === 'max' || v === '') return null;
  const bytes = Number(v);
  if (!Number.isFinite(bytes) || bytes <= 0) throw new Error(`unexpected cgroup memory limit "${v}"`);
  // v1 reports "no limit" as a huge page-aligned number.
  return bytes >= 2 ** 60 ? null : Math.floor(bytes / 2 ** 20);
}

export function effectiveRamMiB(meminfo: string, cgroupLimit: string | null): number {
  const host = parseMeminfo(meminfo);
  const limit = cgroupLimit === null ? null : parseCgroupLimit(cgroupLimit);
  return limit === null ? host : Math.min(host, limit);
}
