/**
 * The GPU models as Vast names them (`gpu_name`) and as nvidia-smi names them (`--query-gpu=name`, the
 * board's product name NVML reports). The fitness gate's model check reads only this table: a model is
 * told for certain only when both names are in it.
 *
 * Each row names the sources of its facts (ids in GPU_NAME_SOURCES). The Vast names are Vast's whole
 * list; an nvidia-smi spelling is either seen in a capture from a real machine or inferred from NVIDIA's
 * naming, and the row says which. A row with no nvidia-smi name is a model the gate cannot tell (an
 * AMD card, or a name with no NVIDIA product behind it): its model check is not judged.
 */
export const GPU_NAME_SOURCES = {
  vastList:
    'vast-ai/vast-cli vastai/data/query.py GPU name constants @ 5567983 (the values the API matches gpu_name against)',
  capture:
    'nvidia-smi captured on real machines: utkuozdemir/nvidia_gpu_exporter internal/captures @ e656cd8 (H100 80GB HBM3 590.48.01, H200 590.48.01, L40S 595.80, GeForce RTX 4080 SUPER 595.71.05, GeForce RTX 2080 SUPER 610.57.04)',
  nccl1264: 'NVIDIA/nccl issue #1264: an 8x H100 SXM host whose nvidia-smi shows "NVIDIA H100 80GB HBM3", 81559 MiB',
  naming:
    'inferred, not captured: NVIDIA\'s product name as the board reports it, drivers since R470 prefixing GeForce and data-centre names with "NVIDIA " (Quadro and Tesla names carry no prefix); a spelling absent here leaves the check not judged, never a kill',
  amd: 'an AMD card: no nvidia-smi on it, the gate cannot tell its model',
  noProduct: "a name in Vast's list with no NVIDIA product of that name known to us: the gate cannot tell it",
} as const;

export type GpuNameSource = keyof typeof GPU_NAME_SOURCES;

export interface GpuNameRow {
  vast: string;
  smi: readonly string[];
  src: readonly GpuNameSource[];
}

const V: GpuNameSource = 'vastList';
const row = (vast: string, smi: readonly string[], ...src: GpuNameSource[]): GpuNameRow => ({
  vast,
  smi,
  src: [V, ...(src.length > 0 ? src : ['naming' as const])],
});
const geforce = (vast: string, model: string) => row(vast, [`NVIDIA GeForce ${model}`]);
const amd = (vast: string) => row(vast, [], 'amd');
const none = (vast: string) => row(vast, [], 'noProduct');

/** Every `gpu_name` in Vast's list, in its order, with the nvidia-smi names of that model. */
export const GPU_NAMES: readonly GpuNameRow[] = [
  row('A10', ['NVIDIA A10']),
  row('A10g', ['NVIDIA A10G']),
  row('A16', ['NVIDIA A16']),
  row('A30', ['NVIDIA A30']),
  row('A40', ['NVIDIA A40']),
  row('A100 PCIE', ['NVIDIA A100-PCIE-40GB', 'NVIDIA A100 80GB PCIe']),
  // Vast lists the SXM4 board under two names.
  row('A100 SXM4', ['NVIDIA A100-SXM4-40GB', 'NVIDIA A100-SXM4-80GB']),
  row('A100 SXM', ['NVIDIA A100-SXM4-40GB', 'NVIDIA A100-SXM4-80GB']),
  row('A100X', ['NVIDIA A100X']),
  row('A800 PCIE', ['NVIDIA A800-PCIE-40GB', 'NVIDIA A800 80GB PCIe']),
  row('B200', ['NVIDIA B200']),
  row('GH200 SXM', ['NVIDIA GH200 480GB', 'NVIDIA GH200 144G HBM3e']),
  row('H100 PCIE', ['NVIDIA H100 PCIe']),
  row('H100 SXM', ['NVIDIA H100 80GB HBM3'], 'capture', 'nccl1264'),
  row('H100 NVL', ['NVIDIA H100 NVL']),
  row('H200', ['NVIDIA H200'], 'capture'),
  row('H200 NVL', ['NVIDIA H200 NVL']),
  row('L4', ['NVIDIA L4']),
  row('L40', ['NVIDIA L40']),
  row('L40S', ['NVIDIA L40S'], 'capture'),
  row('Tesla K20c', ['Tesla K20c']),
  row('Tesla K80', ['Tesla K80']),
  row('Tesla M40', ['Tesla M40', 'Tesla M40 24GB']),
  row('Tesla P4', ['Tesla P4']),
  row('Tesla P6', ['Tesla P6']),
  row('Tesla P40', ['Tesla P40']),
  row('Tesla P100', ['Tesla P100-PCIE-12GB', 'Tesla P100-PCIE-16GB', 'Tesla P100-SXM2-16GB']),
  row('Tesla T4', ['Tesla T4']),
  row('Tesla V100', ['Tesla V100-PCIE-16GB', 'Tesla V100-PCIE-32GB', 'Tesla V100-SXM2-16GB', 'Tesla V100-SXM2-32GB']),
  geforce('GeForce 970', 'GTX 970'),
  geforce('GTX 750 Ti', 'GTX 750 Ti'),
  geforce('GTX 1050', 'GTX 1050'),
  geforce('GTX 1050 Ti', 'GTX 1050 Ti'),
  row('GTX 1060', ['NVIDIA GeForce GTX 1060', 'NVIDIA GeForce GTX 1060 3GB', 'NVIDIA GeForce GTX 1060 6GB']),
  geforce('GTX 1070', 'GTX 1070'),
  geforce('GTX 1070 Ti', 'GTX 1070 Ti'),
  geforce('GTX 1080', 'GTX 1080'),
  geforce('GTX 1080 Ti', 'GTX 1080 Ti'),
  geforce('GTX 1650', 'GTX 1650'),
  geforce('GTX 1650 S', 'GTX 1650 SUPER'),
  geforce('GTX 1650 Ti', 'GTX 1650 Ti'),
  geforce('GTX 1660', 'GTX 1660'),
  geforce('GTX 1660 S', 'GTX 1660 SUPER'),
  geforce('GTX 1660 Ti', 'GTX 1660 Ti'),
  geforce('GTX TITAN X', 'GTX TITAN X'),
  geforce('RTX 2060', 'RTX 2060'),
  geforce('RTX 2060S', 'RTX 2060 SUPER'),
  geforce('RTX 2070', 'RTX 2070'),
  geforce('RTX 2070S', 'RTX 2070 SUPER'),
  geforce('RTX 2080', 'RTX 2080'),
  row('RTX 2080S', ['NVIDIA GeForce RTX 2080 SUPER'], 'capture'),
  geforce('RTX 2080 Ti', 'RTX 2080 Ti'),
  geforce('RTX 3050', 'RTX 3050'),
  geforce('RTX 3060', 'RTX 3060'),
  geforce('RTX 3060 laptop', 'RTX 3060 Laptop GPU'),
  geforce('RTX 3060 Ti', 'RTX 3060 Ti'),
  geforce('RTX 3070', 'RTX 3070'),
  geforce('RTX 3070 laptop', 'RTX 3070 Laptop GPU'),
  geforce('RTX 3070 Ti', 'RTX 3070 Ti'),
  geforce('RTX 3080', 'RTX 3080'),
  geforce('RTX 3080 Ti', 'RTX 3080 Ti'),
  geforce('RTX 3090', 'RTX 3090'),
  geforce('RTX 3090 Ti', 'RTX 3090 Ti'),
  geforce('RTX 4060', 'RTX 4060'),
  geforce('RTX 4060 laptop', 'RTX 4060 Laptop GPU'),
  geforce('RTX 4060 Ti', 'RTX 4060 Ti'),
  geforce('RTX 4070', 'RTX 4070'),
  geforce('RTX 4070 laptop', 'RTX 4070 Laptop GPU'),
  geforce('RTX 4070S', 'RTX 4070 SUPER'),
  geforce('RTX 4070S Ti', 'RTX 4070 Ti SUPER'),
  geforce('RTX 4070 Ti', 'RTX 4070 Ti'),
  geforce('RTX 4080', 'RTX 4080'),
  geforce('RTX 4080 laptop', 'RTX 4080 Laptop GPU'),
  row('RTX 4080S', ['NVIDIA GeForce RTX 4080 SUPER'], 'capture'),
  geforce('RTX 4090', 'RTX 4090'),
  geforce('RTX 4090D', 'RTX 4090 D'),
  none('RTX 4090 Ti'),
  geforce('RTX 5060', 'RTX 5060'),
  geforce('RTX 5060 Ti', 'RTX 5060 Ti'),
  geforce('RTX 5070', 'RTX 5070'),
  geforce('RTX 5070 Ti', 'RTX 5070 Ti'),
  geforce('RTX 5080', 'RTX 5080'),
  geforce('RTX 5090', 'RTX 5090'),
  none('RTX 5090 Ti'),
  row('Titan RTX', ['NVIDIA TITAN RTX']),
  row('Titan V', ['NVIDIA TITAN V']),
  none('TITAN V CEO'),
  // Vast's "Titan X" may be either card of that name (Maxwell or Pascal).
  row('Titan X', ['NVIDIA TITAN X (Pascal)', 'NVIDIA GeForce GTX TITAN X']),
  row('Titan Xp', ['NVIDIA TITAN Xp']),
  row('Quadro K620', ['Quadro K620']),
  row('Quadro K2200', ['Quadro K2200']),
  row('Quadro P2000', ['Quadro P2000']),
  row('Quadro P4000', ['Quadro P4000']),
  row('Quadro P5000', ['Quadro P5000']),
  row('Quadro P6000', ['Quadro P6000']),
  row('Quadro GP100', ['Quadro GP100']),
  row('Quadro GV100', ['Quadro GV100']),
  row('Q RTX 4000', ['Quadro RTX 4000']),
  row('Q RTX 5000', ['Quadro RTX 5000']),
  row('Q RTX 6000', ['Quadro RTX 6000']),
  row('Q RTX 8000', ['Quadro RTX 8000']),
  row('RTX A2000', ['NVIDIA RTX A2000', 'NVIDIA RTX A2000 12GB']),
  row('RTX A4000', ['NVIDIA RTX A4000']),
  row('RTX A4500', ['NVIDIA RTX A4500']),
  row('RTX A5000', ['NVIDIA RTX A5000']),
  row('RTX A6000', ['NVIDIA RTX A6000']),
  row('RTX 2000Ada', ['NVIDIA RTX 2000 Ada Generation']),
  row('RTX 4000Ada', ['NVIDIA RTX 4000 Ada Generation', 'NVIDIA RTX 4000 SFF Ada Generation']),
  row('RTX 4500Ada', ['NVIDIA RTX 4500 Ada Generation']),
  row('RTX 5000Ada', ['NVIDIA RTX 5000 Ada Generation']),
  row('RTX 5880Ada', ['NVIDIA RTX 5880 Ada Generation']),
  row('RTX 6000Ada', ['NVIDIA RTX 6000 Ada Generation']),
  row('RTX PRO 4000', ['NVIDIA RTX PRO 4000 Blackwell']),
  none('RTX PRO 4000 Mobile'),
  row('RTX PRO 4500', ['NVIDIA RTX PRO 4500 Blackwell']),
  row('RTX PRO 5000', ['NVIDIA RTX PRO 5000 Blackwell']),
  // The plain name is the family: any of its three boards.
  row('RTX PRO 6000', [
    'NVIDIA RTX PRO 6000 Blackwell Workstation Edition',
    'NVIDIA RTX PRO 6000 Blackwell Server Edition',
    'NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition',
  ]),
  row('RTX PRO 6000 S', ['NVIDIA RTX PRO 6000 Blackwell Server Edition']),
  row('RTX PRO 6000 WS', ['NVIDIA RTX PRO 6000 Blackwell Workstation Edition']),
  row('RTX PRO 6000 Max-Q', ['NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition']),
  row('CMP 50HX', ['NVIDIA CMP 50HX']),
  row('CMP 170HX', ['NVIDIA CMP 170HX']),
  row('P104-100', ['P104-100']),
  row('P106-100', ['P106-100']),
  ...[
    'InstinctMI50',
    'InstinctMI100',
    'InstinctMI210',
    'InstinctMI250X',
    'PRO W6800',
    'PRO W7800',
    'PRO W7900',
    'Pro V620',
    'Radeon VII',
    'Radeon Pro VII',
    'RX 6800',
    'RX 6800 XT',
    'RX 6900 XT',
    'RX 6950 XT',
    'RX 7600',
    'RX 7700 XT',
    'RX 7800 XT',
    'RX 7900 GRE',
    'RX 7900 XT',
    'RX 7900 XTX',
  ].map(amd),
];

/**
 * nvidia-smi's spellings compared as one: case, runs of spaces, and the "NVIDIA " prefix drivers before
 * R470 left off ("GeForce RTX 3090" then, "NVIDIA GeForce RTX 3090" now).
 */
export function normalizeSmiName(name: string): string {
  return name
    .trim()
    .replace(/\s+/g, ' ')
    .toLowerCase()
    .replace(/^nvidia /, '');
}

const byVast = new Map(GPU_NAMES.map((r) => [r.vast.toLowerCase(), new Set(r.smi.map(normalizeSmiName))]));
const knownSmi = new Set(GPU_NAMES.flatMap((r) => r.smi.map(normalizeSmiName)));

/** The rows that nvidia-smi `name` belongs to (several where Vast has two names for one board). */
export function vastNamesFor(smiName: string): string[] {
  const n = normalizeSmiName(smiName);
  return GPU_NAMES.filter((r) => r.smi.some((s) => normalizeSmiName(s) === n)).map((r) => r.vast);
}

/**
 * Whether an nvidia-smi name is the model Vast's `gpu_name` says: `match`, a certain `mismatch` (both
 * names known, and they are different models), or `unknown` (either name unknown to the table, or a
 * Vast name the gate cannot tell): never grounds for a kill.
 */
export function gpuModelVerdict(smiName: string, vastName: string): 'match' | 'mismatch' | 'unknown' {
  const want = byVast.get(vastName.trim().toLowerCase());
  const n = normalizeSmiName(smiName);
  if (!want || want.size === 0 || !knownSmi.has(n)) return 'unknown';
  return want.has(n) ? 'match' : 'mismatch';
}
