import { simDphBase } from './pricing.js';
import { withNulls } from './fields.js';
import type { SimInstance, VastState } from './state.js';

/** An instance as show/list answer it (§1.8): ports only while running, nulls where the scenario says. */
export function publicInstance(st: VastState, i: SimInstance) {
  const o = i.offer;
  const running = i.actual_status === 'running';
  const cores = typeof o.cpu_cores === 'number' ? o.cpu_cores : null;
  const row = {
    id: i.id,
    machine_id: o.machine_id,
    host_id: o.host_id,
    actual_status: i.actual_status,
    intended_status: i.intended_status,
    cur_state: i.cur_state,
    next_state: i.outbid ? 'stopped' : i.intended_status,
    status_msg: i.status_msg,
    label: i.label,
    image_uuid: i.image,
    image_runtype: 'args',
    image_args: [],
    // As Vast answers (vast-api.md, instance fields): the env's values in clear, the host's credential
    // included, so a test that looks for it in history would find one that leaked through a read.
    extra_env: Object.entries(i.env),
    onstart: null,
    ssh_host: `ssh${(i.id % 9) + 1}.vast.ai`,
    ssh_port: 10_000 + (i.id % 50_000),
    ssh_idx: String((i.id % 9) + 1),
    public_ipaddr: `198.51.100.${o.machine_id % 250}\n`,
    local_ipaddrs: '10.0.0.5 172.17.0.2 \n',
    ports: running ? { '22/tcp': [{ HostIp: '0.0.0.0', HostPort: String(20_000 + (i.id % 1000)) }] } : null,
    direct_port_start: running ? 20_000 : -1,
    direct_port_end: running ? 20_063 : -1,
    direct_port_count: running ? 64 : 0,
    gpu_name: o.gpu_name,
    num_gpus: o.num_gpus,
    gpu_ram: o.gpu_ram,
    gpu_totalram: o.gpu_ram * o.num_gpus,
    gpu_util: running ? 0.93 : null,
    gpu_temp: running ? 64.5 : null,
    cpu_ram: o.cpu_ram,
    cpu_cores: cores,
    cpu_cores_effective: typeof o.cpu_cores_effective === 'number' ? o.cpu_cores_effective : cores,
    cpu_util: running ? 0.4 : null,
    mem_usage: null,
    mem_limit: null,
    disk_space: i.disk,
    disk_usage: running ? 0.3 : -1,
    inet_up: 800.2,
    inet_down: 900.7,
    // An interruptible instance pays its bid for compute (vast-api.md §1.4 `price`), storage on top.
    dph_base: i.bid ?? simDphBase(o),
    storage_cost: o.storage_cost,
    dph_total: i.dph,
    min_bid: st.market.minBid(o),
    is_bid: i.bid !== null,
    reliability2: typeof o.reliability2 === 'number' ? o.reliability2 : 0.97,
    verification: 'verified',
    geolocation: typeof o.geolocation === 'string' ? o.geolocation : 'Czechia, CZ',
    start_date: i.start_date,
    end_date: i.start_date + 90 * 86_400,
    uptime_mins: i.runningAt === null ? null : (Date.now() - i.runningAt) / 60_000,
    country_code: null,
  };
  return withNulls(row, o.sim.instance.nullFields);
}

/** Every instance ever created, as tests' leak checks read it. */
export function ledgerRows(st: VastState) {
  return [...st.instances.values()].map((i) => ({
    id: i.id,
    dph: i.dph,
    createdAt: i.createdAt,
    runningAt: i.runningAt,
    stoppedAt: i.stoppedAt,
    destroyedAt: i.destroyedAt,
    bid: i.bid,
    offerId: i.offer.id,
    machineId: i.offer.machine_id,
    label: i.label,
    status: i.actual_status,
    destroyed: i.destroyed,
    hostAlive: i.host?.alive ?? false,
  }));
}
