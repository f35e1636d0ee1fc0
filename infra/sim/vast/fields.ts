import type { SimOffer } from '../scenario.js';

/**
 * Fills an offer row with the rest of what Vast's search answers carry (../shared/reference/vast-api.md
 * §1.7, §1.13), in Vast's units, derived from the catalogue row so the numbers agree with each other:
 * MB for RAM, $/h for prices, Mb/s for network, GB for disk, epoch seconds for dates, seconds for
 * duration. A catalogue row's own values win. `verified`/`datacenter` are filter-only: never returned.
 */
export function offerSample(o: SimOffer, nowSec: number): Record<string, unknown> {
  const { sim: _sim, ...own } = o;
  const reliability = typeof o.reliability2 === 'number' ? o.reliability2 : 0.97;
  const cores = typeof o.cpu_cores === 'number' ? o.cpu_cores : 32;
  return {
    ask_contract_id: o.id,
    bundle_id: o.id * 10 + 7,
    gpu_total_ram: o.gpu_ram * o.num_gpus,
    gpu_frac: 1,
    gpu_ids: Array.from({ length: o.num_gpus }, (_, i) => o.machine_id * 8 + i),
    gpu_arch: 'nvidia',
    compute_cap: 890,
    driver_version: '550.120.00',
    driver_vers: 550120000,
    gpu_mem_bw: 900.5,
    gpu_lanes: 16,
    pci_gen: 4,
    pcie_bw: 24.6,
    bw_nvlink: 0,
    cpu_name: 'AMD EPYC 7543 32-Core Processor',
    cpu_arch: 'amd64',
    cpu_cores: cores,
    cpu_cores_effective: cores,
    cpu_ghz: 2.8,
    has_avx: 1,
    disk_space: 1000,
    disk_bw: 2500.3,
    disk_name: 'SAMSUNG MZQL23T8HCLS',
    inet_up: 800.2,
    inet_down: 900.7,
    inet_up_cost: 0.003,
    inet_down_cost: 0.003,
    direct_port_count: 64,
    public_ipaddr: `198.51.100.${o.machine_id % 250}`,
    static_ip: true,
    dph_base: o.dph_total,
    min_bid: Math.round(o.dph_total * 0.6 * 1000) / 1000,
    is_bid: false,
    dlperf: 40.1 * o.num_gpus,
    total_flops: 82.6 * o.num_gpus,
    score: 150.2,
    reliability,
    reliability2: reliability,
    verification: 'verified',
    vericode: 1,
    hosting_type: 0,
    external: null,
    geolocation: 'Czechia, CZ',
    os_version: '22.04',
    mobo_name: 'ROMED8-2T',
    start_date: nowSec - 30 * 86_400,
    end_date: nowSec + 90 * 86_400,
    duration: 90 * 86_400,
    ...own,
  };
}

/** Vast serves some fields as null on some rows; the scenario names which. */
export function withNulls<T extends Record<string, unknown>>(row: T, fields: readonly string[]): T {
  if (fields.length === 0) return row;
  const out: Record<string, unknown> = { ...row };
  for (const f of fields) out[f] = null;
  return out as T;
}
