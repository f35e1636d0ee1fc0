import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import { type SimOffer, SimOfferSchema, scaledMs, timeScale } from '../scenario.js';
import { type BootedHost, bootHost, type HostBooter } from './host-boot.js';
import { DEFAULT_ALLOCATED_STORAGE_GB, offerPriceFields, simBilledDph, simDphBase, simStorageDph } from './pricing.js';
import { matchesQuery, QueryError, sortOffers } from './query.js';
import { offerSample, withNulls } from './fields.js';
import { BidMarket, invalidBid } from './bids.js';
import { badKeyStatus, Captured, gatewayPage, type Mangle, mangleAnswer, type Sink } from './mangle.js';

interface SimInstance {
  id: number;
  offer: SimOffer;
  label: string;
  env: Record<string, string>;
  image: string;
  actual_status: string | null;
  intended_status: string;
  /** Contract state: running while the machine is allocated to us, stopped when Vast will not run it. */
  cur_state: string;
  status_msg: string;
  start_date: number;
  /** GB of disk it was created with: storage bills on it. */
  disk: number;
  destroyed: boolean;
  dph: number;
  /** The bid ($/h, Vast's `price`) of an interruptible instance; null for on-demand. */
  bid: number | null;
  /** Set when the market stopped it (a bid under min_bid): when, and the min_bid that did it. */
  outbid: { at: number; minBid: number } | null;
  /** Wall-clock ms: GPU time bills from running to destroy. */
  createdAt: number;
  runningAt: number | null;
  /** Wall-clock ms the market stopped it (GPU billing stops there; storage goes on). */
  stoppedAt: number | null;
  destroyedAt: number | null;
  host: BootedHost | null;
  hostExit: string | null;
  timers: NodeJS.Timeout[];
}

export interface VastSimOptions {
  offers: SimOffer[];
  apiKey: string;
  port?: number;
  baseDir?: string;
  /** How rented machines come up: a GPU-host worker process each (default), or the host farm for scale runs. */
  bootHost?: HostBooter;
  /** Fraction of API calls answered 429 / 503, for chaos tests; `seed` makes the sequence repeatable. */
  chaos?: Chaos;
}

export interface Chaos {
  rate429: number;
  rate5xx: number;
  /** Calls that get no answer at all (the client times out); half of them are carried out first. */
  rateTimeout?: number;
  /** The next this many instance creates are carried out, but their answers never arrive. */
  loseCreateAnswers?: number;
  /** Fraction of calls answered by a gateway's HTML error page (502/504), not carried out. */
  rateHtml?: number;
  /** Fraction of calls carried out whose 200 answer is cut off mid-JSON. */
  rateTruncated?: number;
  /** Fraction of calls carried out whose 200 answer has numbers as strings and booleans as numbers. */
  rateWrongTypes?: number;
  /** The next this many creates are carried out but answered with a truncated body. */
  garbleCreateAnswers?: number;
  /** The next this many creates are refused with HTTP 200 success:false (as Vast refuses on credit). */
  refuseCreates?: number;
  /** The next this many creates reach Vast this many ms late (after the client gave up on them). */
  lateCreates?: number;
  lateCreateMs?: number;
  /** Every answer takes this long (a slow Vast). */
  slowMs?: number;
  seed?: number;
}

/** mulberry32: a tiny seeded PRNG, so a chaos run can be replayed exactly. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface VastSim {
  url: string;
  /** Every instance ever created, for tests' leak checks. */
  ledger(): Array<{
    id: number;
    dph: number;
    createdAt: number;
    runningAt: number | null;
    stoppedAt: number | null;
    destroyedAt: number | null;
    /** The bid of an interruptible instance ($/h); null for on-demand. */
    bid: number | null;
    offerId: number;
    machineId: number;
    label: string;
    status: string | null;
    destroyed: boolean;
    hostAlive: boolean;
  }>;
  close(): Promise<void>;
}

const json = (res: Sink, status: number, body: unknown) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};

/**
 * Simulated Vast.ai API: same paths, fields, units (RAM in MB) and error shapes as the real one
 * (../shared/reference/vast-api.md). Rented instances go created -> loading -> running and then boot a
 * simulated GPU host running the real GPU-host worker.
 */
export async function startVastSim(opts: VastSimOptions): Promise<VastSim> {
  const scale = timeScale();
  const baseDir = opts.baseDir ?? mkdtempSync(path.join(os.tmpdir(), 'vast-sim-'));
  const offers = new Map(opts.offers.map((o) => [o.id, o]));
  const instances = new Map<number, SimInstance>();
  const taken = new Set<number>();
  // Offers still listed but rented by someone else the moment we try: the search-then-create race.
  const racedAway = new Set<number>();
  let nextId = 30_000_000 + Math.floor(Math.random() * 1_000_000);
  let chaos: Chaos = opts.chaos ?? { rate429: 0, rate5xx: 0 };
  let chaosRandom = chaos.seed === undefined ? Math.random : seeded(chaos.seed);
  const stats = {
    calls: 0,
    injected429: 0,
    injected5xx: 0,
    injectedTimeouts: 0,
    lostCreateAnswers: 0,
    injectedHtml: 0,
    injectedTruncated: 0,
    injectedWrongTypes: 0,
    garbledCreateAnswers: 0,
    refusedCreates: 0,
    lateCreates: 0,
    outageAnswers: 0,
  };
  /** Epoch ms until which every API call meets a gateway error page (a Vast outage). */
  let outageUntil = 0;
  const market = new BidMarket(Date.now(), scale);

  /**
   * Vast stops an interruptible instance whose bid falls under min_bid: not destroyed, storage still
   * billed (SKILL.md), every state field stopped (the pattern dstack fails fast on, PR #4037).
   */
  function stopOutbid(inst: SimInstance, minBid: number): void {
    inst.outbid = { at: Date.now(), minBid };
    inst.timers.forEach(clearTimeout);
    inst.timers = [];
    inst.host?.kill();
    inst.host = null;
    inst.actual_status = inst.actual_status === null ? null : 'stopped';
    inst.intended_status = 'stopped';
    inst.cur_state = 'stopped';
    inst.status_msg = `Instance stopped: outbid (min_bid $${minBid}/h above bid $${inst.bid}/h)`;
    if (inst.runningAt !== null) inst.stoppedAt = Date.now();
  }

  const marketTick = setInterval(() => {
    for (const inst of instances.values()) {
      if (inst.destroyed || inst.bid === null || inst.outbid) continue;
      const minBid = market.minBid(inst.offer);
      if (inst.bid < minBid) stopOutbid(inst, minBid);
    }
  }, 100);
  marketTick.unref();

  // Priced for the search's allocated_storage, as Vast does: the same offer is dearer for a bigger disk.
  const publicOffer = (o: SimOffer, allocatedGb: number) =>
    withNulls(
      {
        ...offerSample(o, Date.now() / 1000),
        ...offerPriceFields(o, allocatedGb),
        min_bid: market.minBid(o, Date.now() - scaledMs(o.sim.market.searchLagSec, scale)),
        rentable: !taken.has(o.id),
        rented: taken.has(o.id),
      },
      o.sim.offerNullFields,
    );

  /** An instance as show/list answer it (§1.8): ports only while running, nulls where the scenario says. */
  const publicInstance = (i: SimInstance) => {
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
      min_bid: market.minBid(o),
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
  };

  function destroy(inst: SimInstance): void {
    inst.destroyed = true;
    inst.destroyedAt = Date.now();
    inst.cur_state = 'unloaded';
    inst.timers.forEach(clearTimeout);
    inst.host?.kill();
    taken.delete(inst.offer.id);
  }

  function schedule(inst: SimInstance): void {
    const sc = inst.offer.sim.instance;
    const at = (sec: number, fn: () => void) => inst.timers.push(setTimeout(fn, scaledMs(sec, scale)));
    at(0.5, () => {
      inst.actual_status = 'created';
    });
    at(1, () => {
      inst.actual_status = 'loading';
      inst.status_msg = `Pulling image ${inst.image}`;
    });
    if (sc.fate === 'stuck_loading') return;
    at(1 + sc.loadingSec, () => {
      if (sc.fate === 'stopped') {
        // Vast will not run it (outbid, zero balance): every state field says stopped, still "loading".
        inst.intended_status = 'stopped';
        inst.cur_state = 'stopped';
        inst.status_msg = 'Instance stopped: insufficient bid';
        return;
      }
      if (sc.fate === 'exited' || sc.fate === 'offline') {
        inst.actual_status = sc.fate;
        inst.status_msg =
          sc.fate === 'exited' ? 'Error: OCI runtime create failed: nvidia-container-cli: initialization error' : '';
        return;
      }
      inst.actual_status = 'running';
      inst.runningAt = Date.now();
      inst.status_msg = `success, running ${inst.image}`;
      void (opts.bootHost ?? bootHost)(inst.offer, inst.id, inst.env, baseDir, (code, signal) => {
        inst.hostExit = `code=${code} signal=${signal}`;
      }).then(
        (host) => {
          // Destroyed, or stopped by the market, while it booted: the machine is not ours to run.
          if (inst.destroyed || inst.outbid) return host.kill();
          inst.host = host;
        },
        (err: unknown) => {
          // The machine never came up: to the renter it looks like a host whose worker never connects.
          inst.hostExit = `boot failed: ${err instanceof Error ? err.message : String(err)}`;
        },
      );
      if (sc.preemptAfterSec !== undefined) {
        at(sc.preemptAfterSec, () => {
          inst.host?.kill();
          inst.actual_status = 'offline';
        });
      }
    });
  }

  async function readBody(req: http.IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    if (!text) return {};
    return JSON.parse(text);
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim');
    const p = url.pathname;
    const method = req.method ?? 'GET';

    // Test and demo control plane, outside the Vast API's paths.
    if (p.startsWith('/_sim/')) return handleAdmin(method, p, req, res);

    // Search works without any key (gpuhunt searches unauthenticated); a wrong key is refused.
    const key = req.headers.authorization;
    const anonymousSearch = key === undefined && method === 'POST' && p === '/api/v0/bundles/';
    if (key !== `Bearer ${opts.apiKey}` && !anonymousSearch) {
      return json(res, badKeyStatus(method, p), { success: false, error: 'auth_error', msg: 'Invalid user key' });
    }
    const body = await readBody(req);
    stats.calls++;
    if (chaos.slowMs) await new Promise((r) => setTimeout(r, chaos.slowMs));
    if (Date.now() < outageUntil) {
      stats.outageAnswers++;
      const status = stats.outageAnswers % 2 ? 503 : 504;
      res.writeHead(status, { 'Content-Type': 'text/html' });
      return void res.end(gatewayPage(status));
    }
    const roll = chaosRandom();
    if (roll < chaos.rate429) {
      stats.injected429++;
      res.writeHead(429, { 'Content-Type': 'text/plain' });
      return void res.end('API requests too frequent endpoint threshold=4.5');
    }
    if (roll < chaos.rate429 + chaos.rate5xx) {
      stats.injected5xx++;
      return json(res, 503, { detail: 'Service Unavailable' });
    }
    const isCreate = method === 'PUT' && p.startsWith('/api/v0/asks/');
    const loseThisCreate = isCreate && (chaos.loseCreateAnswers ?? 0) > 0;
    if (loseThisCreate || roll < chaos.rate429 + chaos.rate5xx + (chaos.rateTimeout ?? 0)) {
      stats.injectedTimeouts++;
      if (loseThisCreate) chaos.loseCreateAnswers = (chaos.loseCreateAnswers ?? 1) - 1;
      // A create whose answer is lost is how a careless client rents twice: half of these are done first.
      if (loseThisCreate || chaosRandom() < 0.5) {
        await route(body, new Captured(), url, p, method);
        if (isCreate) stats.lostCreateAnswers++;
      }
      setTimeout(() => req.socket.destroy(), 120_000).unref();
      return;
    }
    if (isCreate && (chaos.refuseCreates ?? 0) > 0) {
      chaos.refuseCreates = (chaos.refuseCreates ?? 1) - 1;
      stats.refusedCreates++;
      return json(res, 200, { success: false, error: 'insufficient_credit', msg: 'Insufficient credit' });
    }
    if (isCreate && (chaos.lateCreates ?? 0) > 0) {
      // The request reaches Vast after the client gave up on it: it is carried out then, answered to no one.
      chaos.lateCreates = (chaos.lateCreates ?? 1) - 1;
      stats.lateCreates++;
      setTimeout(() => void route(body, new Captured(), url, p, method), chaos.lateCreateMs ?? 5_000);
      setTimeout(() => req.socket.destroy(), 120_000).unref();
      return;
    }
    let spoil: Mangle | null = null;
    if (isCreate && (chaos.garbleCreateAnswers ?? 0) > 0) {
      chaos.garbleCreateAnswers = (chaos.garbleCreateAnswers ?? 1) - 1;
      stats.garbledCreateAnswers++;
      spoil = 'truncate';
    } else {
      const r = chaosRandom();
      const html = chaos.rateHtml ?? 0;
      const trunc = chaos.rateTruncated ?? 0;
      if (r < html) {
        stats.injectedHtml++;
        res.writeHead(502, { 'Content-Type': 'text/html' });
        return void res.end(gatewayPage(502));
      }
      if (r < html + trunc) spoil = 'truncate';
      else if (r < html + trunc + (chaos.rateWrongTypes ?? 0)) spoil = 'wrongTypes';
    }
    if (!spoil) return route(body, res, url, p, method);
    // Carried out at Vast; only the answer is spoilt on its way back (2xx answers only).
    const captured = new Captured();
    await route(body, captured, url, p, method);
    if (captured.status >= 300) {
      res.writeHead(captured.status, captured.headers);
      return void res.end(captured.body);
    }
    if (spoil === 'truncate') stats.injectedTruncated++;
    else stats.injectedWrongTypes++;
    res.writeHead(captured.status, captured.headers);
    res.end(mangleAnswer(captured.body, spoil));
  }

  async function route(body: unknown, res: Sink, url: URL, p: string, method: string): Promise<void> {
    let m: RegExpExecArray | null;
    if (method === 'POST' && p === '/api/v0/bundles/') {
      const q = body as Record<string, unknown>;
      const rentableOnly = !('rentable' in q);
      const allocated = q.allocated_storage ?? DEFAULT_ALLOCATED_STORAGE_GB;
      if (typeof allocated !== 'number' || !(allocated > 0))
        return json(res, 400, {
          success: false,
          error: 'invalid_args',
          msg: 'allocated_storage must be a number of GB',
        });
      let list = [...offers.values()].map((o) => publicOffer(o, allocated)).filter((o) => !rentableOnly || o.rentable);
      try {
        list = list.filter((o) => matchesQuery(o, q));
      } catch (err) {
        if (err instanceof QueryError)
          return json(res, 400, { success: false, error: 'invalid_args', msg: err.message });
        throw err;
      }
      const sorted = sortOffers(list, q.order);
      const limit = typeof q.limit === 'number' ? q.limit : 64;
      return json(res, 200, { offers: sorted.slice(0, limit) });
    }
    if (method === 'PUT' && (m = /^\/api\/v0\/asks\/(\d+)\/$/.exec(p))) {
      const offerId = Number(m[1]);
      const req = body as Record<string, unknown>;
      const offer = offers.get(offerId);
      if (!offer || taken.has(offerId) || racedAway.has(offerId)) {
        return json(res, 404, {
          success: false,
          error: 'invalid_args',
          msg: `error 404/3603: no_such_ask Instance type by id ${offerId} is not available.`,
          ask_id: offerId,
        });
      }
      const invalid = validateCreate(req) ?? invalidBid(req.price);
      if (invalid)
        return json(res, 400, {
          success: false,
          error: invalid.startsWith('price') ? 'invalid_price' : 'invalid_args',
          msg: `error 400/3467: Invalid args: ${invalid}`,
          ask_id: offerId,
        });
      const bid = typeof req.price === 'number' ? req.price : null;
      const minBid = market.minBid(offer);
      const underBid = bid !== null && bid < minBid;
      if (underBid && req.cancel_unavail === true) {
        // Told not to make an instance it cannot schedule now: refused as unschedulable (§1.4, 410).
        return json(res, 410, {
          success: false,
          error: 'no_such_ask',
          msg: `error 410/3907: no_such_ask Instance type ${offerId} is no longer available.`,
        });
      }
      taken.add(offerId);
      const disk = req.disk as number;
      const inst: SimInstance = {
        id: nextId++,
        offer,
        label: String(req.label ?? ''),
        env: req.env as Record<string, string>,
        image: String(req.image),
        actual_status: null,
        intended_status: 'running',
        cur_state: 'running',
        status_msg: '',
        start_date: Date.now() / 1000,
        disk,
        destroyed: false,
        dph: bid === null ? simBilledDph(offer, disk) : bid + simStorageDph(disk, offer.storage_cost),
        bid,
        outbid: null,
        createdAt: Date.now(),
        runningAt: null,
        stoppedAt: null,
        destroyedAt: null,
        host: null,
        hostExit: null,
        timers: [],
      };
      instances.set(inst.id, inst);
      if (underBid) {
        // dstack (api_client.py, PR #4036): "Vast.ai creates spot instances in the stopped state and returns
        // an error if the bid is insufficient"; the error carries new_contract. Vast's exact words are not
        // public: this body is the simulator's, and clients must not depend on more than new_contract.
        stopOutbid(inst, minBid);
        return json(res, 200, {
          success: false,
          error: 'insufficient_bid',
          msg: `bid $${bid}/h is under the current min_bid $${minBid}/h: instance ${inst.id} created stopped`,
          new_contract: inst.id,
        });
      }
      schedule(inst);
      return json(res, 200, { success: true, new_contract: inst.id, instance_api_key: `sim-${inst.id}` });
    }
    if (method === 'PUT' && (m = /^\/api\/v0\/instances\/bid_price\/(\d+)\/$/.exec(p))) {
      // Change bid (change_bid.yaml: body {client_id, price}, price 0.001 to 32 $/h per GPU, answer {"success": true};
      // out of range 400 invalid_args, a gone instance 404 no_such_instance).
      const inst = instances.get(Number(m[1]));
      const req = body as Record<string, unknown>;
      if (!inst || inst.destroyed)
        return json(res, 404, { success: false, error: 'no_such_instance', msg: `Instance ${m[1]} not found.` });
      const bad =
        typeof req.price === 'number' ? invalidBid(req.price, 32 * inst.offer.num_gpus) : 'price is required ($/h)';
      if (bad) return json(res, 400, { success: false, error: 'invalid_args', msg: `error 400: ${bad}` });
      if (inst.bid === null)
        return json(res, 400, {
          success: false,
          error: 'invalid_args',
          msg: `instance ${inst.id} is not interruptible`,
        });
      inst.bid = req.price as number;
      inst.dph = inst.bid + simStorageDph(inst.disk, inst.offer.storage_cost);
      // "only with start / bid changes" (§1.9): a stopped interruptible whose new bid wins starts again.
      if (inst.outbid && inst.bid >= market.minBid(inst.offer)) {
        inst.outbid = null;
        inst.intended_status = 'running';
        inst.cur_state = 'running';
        inst.actual_status = null;
        inst.runningAt = null;
        schedule(inst);
      }
      return json(res, 200, { success: true });
    }
    if (method === 'GET' && (m = /^\/api\/v0\/instances\/(\d+)\/$/.exec(p))) {
      const id = Number(m[1]);
      const inst = instances.get(id);
      const after = inst?.destroyed ? inst.offer.sim.instance.afterDestroy : 'null';
      if (after !== 'null') {
        // Some answers for a gone instance are a 404, as vast-cli's self-test accepts after a destroy.
        const error = after === '404-not_found' ? 'not_found' : 'no_such_instance';
        return json(res, 404, { success: false, error, msg: `Instance ${id} not found.` });
      }
      return json(res, 200, { instances: inst && !inst.destroyed ? publicInstance(inst) : null });
    }
    if (method === 'DELETE' && (m = /^\/api\/v0\/instances\/(\d+)\/$/.exec(p))) {
      const inst = instances.get(Number(m[1]));
      if (!inst || inst.destroyed)
        return json(res, 404, { success: false, error: 'no_such_instance', msg: `Instance ${m[1]} not found.` });
      destroy(inst);
      return json(res, 200, { success: true });
    }
    if (method === 'GET' && p === '/api/v0/instances/') {
      return json(res, 410, {
        success: false,
        error: 'deprecated_endpoint',
        msg: '/api/v0/instances/ is deprecated. Use /api/v1/instances/ instead.',
      });
    }
    if (method === 'GET' && p === '/api/v1/instances/') {
      let filters: Record<string, unknown>;
      try {
        filters = JSON.parse(url.searchParams.get('select_filters') ?? '{}') as Record<string, unknown>;
      } catch {
        return json(res, 400, {
          success: false,
          error: 'invalid_args',
          msg: 'Error in query parameters: select_filters is not JSON',
        });
      }
      for (const key of Object.keys(filters)) {
        if (['dph_total', 'num_gpus'].includes(key)) {
          return json(res, 400, {
            success: false,
            error: 'invalid_args',
            msg: `Error in query parameters: ${key} is not a valid search key`,
          });
        }
      }
      const limitRaw = Number(url.searchParams.get('limit') ?? '25');
      const limit = limitRaw <= 0 ? 5 : Math.min(25, limitRaw);
      const after = Number(url.searchParams.get('after_token') ?? '0');
      if (url.searchParams.has('after_token') && !Number.isInteger(after)) {
        return json(res, 400, { success: false, error: 'invalid_token', msg: 'invalid token' });
      }
      const all = [...instances.values()]
        .filter((i) => !i.destroyed && i.id > after)
        .map(publicInstance)
        .filter((i) => matchesQuery(i, filters))
        .sort((a, b) => a.id - b.id);
      const page = all.slice(0, limit);
      const last = page[page.length - 1];
      return json(res, 200, {
        success: true,
        instances_found: page.length,
        total_instances: all.length,
        next_token: all.length > limit && last ? String(last.id) : null,
        instances: page,
      });
    }
    if (method === 'GET' && (p === '/api/v0/users/current' || p === '/api/v0/users/current/')) {
      return json(res, 200, { id: 1, username: 'sim', email: 'sim@example.invalid', credit: 1000, balance: 1000 });
    }
    return json(res, 404, { success: false, error: 'not_found', msg: `no route for ${method} ${p}` });
  }

  async function handleAdmin(method: string, p: string, req: http.IncomingMessage, res: http.ServerResponse) {
    let m: RegExpExecArray | null;
    if (method === 'GET' && p === '/_sim/ledger') return json(res, 200, sim.ledger());
    if (method === 'GET' && p === '/_sim/stats') return json(res, 200, stats);
    if (method === 'POST' && p === '/_sim/chaos') {
      chaos = (await readBody(req)) as Chaos;
      chaosRandom = chaos.seed === undefined ? Math.random : seeded(chaos.seed);
      return json(res, 200, { ok: true });
    }
    if (method === 'POST' && p === '/_sim/outage') {
      // A Vast outage: every API call meets a gateway's HTML error page for this many seconds.
      const { sec } = (await readBody(req)) as { sec: number };
      outageUntil = Date.now() + sec * 1000;
      return json(res, 200, { ok: true, until: new Date(outageUntil).toISOString() });
    }
    if (method === 'POST' && p === '/_sim/offers') {
      // A host listing a new offer during a run (the market bench's day); an id already listed is refused.
      const parsed = SimOfferSchema.safeParse(await readBody(req));
      if (!parsed.success) return json(res, 400, { ok: false, error: parsed.error.message });
      if (offers.has(parsed.data.id))
        return json(res, 409, { ok: false, error: `offer ${parsed.data.id} is already listed` });
      offers.set(parsed.data.id, parsed.data);
      return json(res, 200, { ok: true });
    }
    if (method === 'POST' && (m = /^\/_sim\/offers\/(\d+)\/take$/.exec(p))) {
      taken.add(Number(m[1]));
      return json(res, 200, { ok: true });
    }
    if (method === 'POST' && (m = /^\/_sim\/offers\/(\d+)\/race$/.exec(p))) {
      racedAway.add(Number(m[1]));
      return json(res, 200, { ok: true });
    }
    if (method === 'POST' && (m = /^\/_sim\/offers\/(\d+)\/min_bid$/.exec(p))) {
      // The market moves now (tests, the bench): bids under the new min_bid stop within a tick.
      const { minBid } = (await readBody(req)) as { minBid: number };
      if (!(typeof minBid === 'number' && minBid > 0)) return json(res, 400, { ok: false, error: 'minBid ($/h) > 0' });
      market.set(Number(m[1]), minBid);
      return json(res, 200, { ok: true });
    }
    if (method === 'POST' && (m = /^\/_sim\/instances\/(\d+)\/price$/.exec(p))) {
      // A host raising its price on a running contract.
      const inst = instances.get(Number(m[1]));
      if (!inst) return json(res, 404, { ok: false });
      inst.dph = ((await readBody(req)) as { dph: number }).dph;
      return json(res, 200, { ok: true });
    }
    if (method === 'POST' && (m = /^\/_sim\/instances\/(\d+)\/preempt$/.exec(p))) {
      const inst = instances.get(Number(m[1]));
      if (!inst) return json(res, 404, { ok: false });
      inst.host?.kill();
      inst.actual_status = 'offline';
      return json(res, 200, { ok: true });
    }
    return json(res, 404, { ok: false });
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (err instanceof SyntaxError)
        return json(res, 400, { success: false, error: 'invalid_request', msg: 'body is not JSON' });
      json(res, 500, { success: false, error: 'server_error', msg: err instanceof Error ? err.message : String(err) });
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;

  const sim: VastSim = {
    url: `http://127.0.0.1:${port}`,
    ledger: () =>
      [...instances.values()].map((i) => ({
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
      })),
    async close() {
      clearInterval(marketTick);
      for (const inst of instances.values()) {
        inst.timers.forEach(clearTimeout);
        inst.host?.kill();
      }
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return sim;
}

function validateCreate(body: Record<string, unknown>): string | null {
  if (typeof body.image !== 'string' || body.image.length === 0 || body.image.length > 1024)
    return 'image is required (1024 chars max)';
  if (typeof body.disk !== 'number' || body.disk < 8) return 'disk must be a number >= 8 (GB)';
  if (body.label !== undefined && (typeof body.label !== 'string' || body.label.length > 256)) return 'label_too_long';
  if (body.env !== undefined) {
    if (body.env === null || typeof body.env !== 'object') return 'env must be an object';
    for (const [k, v] of Object.entries(body.env)) {
      if (typeof v !== 'string' || k.length + v.length > 256) return `env entry ${k} must be a string of 256 chars max`;
    }
  }
  return null;
}
