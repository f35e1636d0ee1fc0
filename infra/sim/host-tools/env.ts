import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SimOffer } from '../scenario.js';
import { sampleUrl, simNetUrl } from '../net.js';
import { GPU_NAMES } from '../../../workflows/domain/policy/gpu-names.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const tool = (name: string, ...args: Array<string | number>) =>
  JSON.stringify(['bash', path.join(HERE, name), ...args.map(String)]);

/**
 * The GPU-host worker's fitness probes for one simulated machine: the product runs them as it would on
 * a rented host (commands and a download), and they answer with the machine the scenario describes.
 */
export async function simFitnessEnv(offer: SimOffer): Promise<Record<string, string>> {
  const m = offer.sim.host.machine;
  const cuda = m.cudaVersion ?? (typeof offer.cuda_max_good === 'number' ? offer.cuda_max_good : 12.4);
  const disk = Math.round(m.diskFreeGiB * 2 ** 30);
  // The name a real host of this model prints, so the gate's name mapping is exercised end to end.
  const smiName = GPU_NAMES.find((r) => r.vast === offer.gpu_name)?.smi[0] ?? `NVIDIA ${offer.gpu_name}`;
  return {
    NVIDIA_SMI_CMD: tool(
      'nvidia-smi.sh',
      m.gpus ?? offer.num_gpus,
      m.gpuName ?? smiName,
      m.vramMiB ?? Math.round(offer.gpu_ram),
      m.driver,
      cuda === 'N/A' ? cuda : cuda.toFixed(1),
      m.driverVersion,
    ),
    DISK_FREE_CMD: tool('df.sh', disk, Math.max(disk, 2 * 2 ** 40)),
    DISK_WRITE_CMD: tool('dd.sh', m.diskWriteMBps),
    // Only a machine whose scenario gives its link speed gets a sample URL: for the others this machine's
    // CPU, not a link, would bound the sample (the gate then says the download was not judged).
    ...(m.downMbps === undefined ? {} : { FITNESS_SAMPLE_URL: sampleUrl(await simNetUrl(), m.downMbps) }),
  };
}
