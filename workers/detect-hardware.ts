import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import {
  effectiveRamMiB,
  type Hardware,
  NVIDIA_SMI_GPU_QUERY,
  parseNvidiaSmiCsv,
} from '../activities/gpu-host/hardware.js';

/**
 * Run by the GPU-host image's entrypoint: prints the machine's GPUs (nvidia-smi), usable RAM (the
 * container's cgroup limit when lower than the host's) and CPU count as JSON, and fails loudly when
 * no GPU is visible — a rented GPU host without GPUs must not start proving.
 */
function cgroupLimit(): string | null {
  for (const file of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    if (existsSync(file)) return readFileSync(file, 'utf8');
  }
  return null;
}

const smi = execFileSync('nvidia-smi', NVIDIA_SMI_GPU_QUERY, { encoding: 'utf8' });
const hardware: Hardware = {
  gpus: parseNvidiaSmiCsv(smi),
  ramMiB: effectiveRamMiB(readFileSync('/proc/meminfo', 'utf8'), cgroupLimit()),
  cpus: os.availableParallelism(),
};
if (hardware.gpus.length === 0) {
  console.error('detect-hardware: nvidia-smi lists no GPU');
  process.exit(1);
}
console.log(JSON.stringify(hardware));
