import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offerFacts } from '../../activities/vast/activities.js';
import { VastClient, VastHttpError, VastResponseShapeError } from '../../activities/vast/client.js';
import { toVastFailure } from '../../activities/vast/errors.js';
import { startVastSim, type VastSim } from '../../infra/sim/vast/server.js';
import { simOffer } from '../helpers/offers.js';

/**
 * Documented Vast answers (each fixture names its source) replayed through our client, and the
 * simulator's answers compared with them field by field over the fields the product reads.
 */
interface Fixture {
  source: string;
  request: { method: string; path: string };
  response: { status: number; body?: unknown; text?: string };
}
const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'vast');
const fixtures = Object.fromEntries(
  readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => [f.replace(/\.json$/, ''), JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as Fixture]),
);
const fx = (name: string): Fixture => {
  const f = fixtures[name];
  if (!f) throw new Error(`no fixture ${name}`);
  return f;
};
const body = (name: string) => fx(name).response.body as Record<string, unknown>;

// The offer and instance fields the product reads (activities/vast/schemas.ts), with their unit's sane range.
const OFFER_FIELDS: Record<string, [number, number] | 'string' | 'boolean'> = {
  id: [1, 2 ** 53],
  machine_id: [0, 2 ** 53],
  host_id: [0, 2 ** 53],
  gpu_name: 'string',
  num_gpus: [1, 64],
  gpu_ram: [1_000, 200_000], // MB per GPU
  cpu_ram: [1_000, 10_000_000], // MB, host total
  cpu_cores: [1, 1024],
  cpu_cores_effective: [0.5, 1024],
  dph_total: [0.0001, 200], // $/h
  dph_base: [0.0001, 200], // $/h, compute alone
  storage_cost: [0, 10], // $/GB/month
  reliability2: [0, 1],
  cuda_max_good: [8, 20],
  rentable: 'boolean',
  verification: 'string',
};
const INSTANCE_FIELDS: Record<string, [number, number] | 'string'> = {
  id: [1, 2 ** 53],
  machine_id: [0, 2 ** 53],
  host_id: [0, 2 ** 53],
  actual_status: 'string',
  intended_status: 'string',
  cur_state: 'string',
  next_state: 'string',
  status_msg: 'string',
  label: 'string',
  gpu_name: 'string',
  num_gpus: [1, 64],
  cpu_ram: [1_000, 10_000_000], // MB
  cpu_cores_effective: [0.5, 1024],
  dph_total: [0.0001, 200], // $/h
  dph_base: [0.0001, 200], // $/h
  disk_space: [1, 100_000], // GB
  start_date: [1e9, 1e10], // epoch seconds, not ms
};

/** Same presence, same JSON type, and a value in the field's unit range, on both sides. */
function expectSameContract(
  documented: Record<string, unknown>,
  simulated: Record<string, unknown>,
  fields: Record<string, [number, number] | 'string' | 'boolean'>,
): void {
  for (const [field, unit] of Object.entries(fields)) {
    if (!(field in documented)) continue; // the documented sample does not show it
    expect(simulated, `simulator serves ${field}`).toHaveProperty(field);
    const [d, s] = [documented[field], simulated[field]];
    expect(typeof s, `${field}: type`).toBe(typeof d);
    if (Array.isArray(unit)) {
      for (const v of [d, s]) {
        expect(v as number, `${field}: ${String(v)} in its unit`).toBeGreaterThanOrEqual(unit[0]);
        expect(v as number, `${field}: ${String(v)} in its unit`).toBeLessThanOrEqual(unit[1]);
      }
    }
  }
}

describe('documented Vast answers through our client', () => {
  let next: Fixture['response'] = { status: 200, body: {} };
  let server: http.Server;
  let vast: VastClient;
  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      if (next.text !== undefined)
        return void res.writeHead(next.status, { 'Content-Type': 'text/plain' }).end(next.text);
      res.writeHead(next.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(next.body));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const a = server.address();
    vast = new VastClient({ baseUrl: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`, apiKey: 'k' });
  });
  afterAll(() => server?.close());
  const serve = (name: string) => {
    next = fx(name).response;
  };
  const failure = async (p: Promise<unknown>) =>
    p.then(
      () => null,
      (e: unknown) => e,
    );

  it('every fixture names its source', () => {
    expect(Object.keys(fixtures).length).toBeGreaterThanOrEqual(10);
    for (const [name, f] of Object.entries(fixtures)) expect(f.source, name).toMatch(/\S{10,}/);
  });

  it('a real offer row parses; RAM is the renter share of the host total (MB), price in $/h', async () => {
    serve('offer-search-capture');
    const report = await vast.searchOffersReport({});
    expect(report.dropped.count).toBe(0);
    // Priced as searched (the CLI's default 5 GiB of allocated storage): dph_base + 5 GB x storage_cost / 720.
    const facts = offerFacts(report.offers[0]!, 5);
    expect(facts).toMatchObject({ offerId: 11684738, machineId: 22990, numGpus: 1 });
    expect(facts.dphTotal).toBeCloseTo(0.2466759259259259, 6); // rounded to the micro-dollar
    expect(facts.cpuRamMb).toBe(Math.round((64393 * 24) / 96));
  });

  it('an abridged documented row lacking machine_id is dropped with its reason; the rest is kept', async () => {
    const capture = (body('offer-search-capture').offers as unknown[])[0];
    const abridged = (body('offer-search-openapi-example').offers as unknown[])[0];
    next = { status: 200, body: { offers: [abridged, capture] } };
    const report = await vast.searchOffersReport({});
    expect(report.offers.map((o) => o.id)).toEqual([11684738]);
    expect(report.dropped).toEqual({
      count: 1,
      firstReason: expect.stringMatching(/^row 0 \(offer 12345\): machine_id/),
    });
    // A page of nothing but such rows is refused as a whole, naming the field.
    serve('offer-search-openapi-example');
    const err = await failure(vast.searchOffersReport({}));
    expect(err).toBeInstanceOf(VastResponseShapeError);
    expect((err as Error).message).toMatch(/machine_id/);
  });

  it('a documented instance parses, and so does one with every field but id null', async () => {
    serve('show-instance-openapi-example');
    expect(await vast.showInstance(312)).toMatchObject({ id: 312, actual_status: 'running', dph_total: 0.8021 });
    const inst = body('show-instance-openapi-example').instances as Record<string, unknown>;
    next = {
      status: 200,
      body: { instances: Object.fromEntries(Object.keys(inst).map((k) => [k, k === 'id' ? 312 : null])) },
    };
    expect(await vast.showInstance(312)).toMatchObject({ id: 312, actual_status: null });
  });

  it('a gone instance: show answers null or 404; DELETE answers 404 no_such_instance', async () => {
    serve('show-instance-gone-null');
    expect(await vast.showInstance(312)).toBeNull();
    serve('show-instance-gone-404');
    const shown = await failure(vast.showInstance(312));
    expect((shown as VastHttpError).isInstanceGone).toBe(true);
    serve('destroy-ok');
    await vast.destroyInstance(312);
    serve('destroy-gone-404');
    const del = await failure(vast.destroyInstance(312));
    expect((del as VastHttpError).isInstanceGone).toBe(true);
  });

  it('a bad key is an auth error whether 401 or 404, on DELETE too, and is final', async () => {
    for (const name of ['auth-401', 'auth-404-destroy']) {
      serve(name);
      const err = (await failure(vast.destroyInstance(312))) as VastHttpError;
      expect(err.isAuth, name).toBe(true);
      expect(err.isInstanceGone, name).toBe(false);
      const f = toVastFailure(err, 1);
      expect(f.nonRetryable).toBe(true);
      expect(f.message).toMatch(/rejected the API key .*auth_error: Invalid user key/);
    }
  });

  it('creates: ok, offer gone (404/410) is OfferUnavailable, 200 success:false says what Vast said', async () => {
    serve('create-ok');
    const req = { image: 'i', disk: 20, label: 'l', env: {} };
    expect(await vast.createInstance(11684738, req)).toBe(12345678);
    for (const name of ['create-offer-gone-404', 'create-offer-gone-410']) {
      serve(name);
      const f = toVastFailure(await failure(vast.createInstance(11684738, req)), 1, { offerId: 11684738 });
      expect(f.type, name).toBe('OfferUnavailable');
    }
    serve('create-refused-200');
    const err = (await failure(vast.createInstance(11684738, req))) as VastHttpError;
    expect(err).toBeInstanceOf(VastHttpError);
    expect(err.newContract).toBe(12345679);
    const f = toVastFailure(err, 1, { offerId: 11684738 });
    expect(f.message).toContain('insufficient_credit: Insufficient credit');
    expect(f.nonRetryable).toBe(true);
  });

  it('a plain-text 429 is retried with a delay of our own (no Retry-After)', async () => {
    serve('rate-limited-429');
    const f = toVastFailure(await failure(vast.searchOffersReport({})), 1);
    expect(f.nonRetryable).toBe(false);
    expect(f.nextRetryDelay).toBeDefined();
  });
});

describe('the simulator answers as the documented answers do', () => {
  const KEY = 'conformance-key';
  const plain = simOffer({ cpu_cores: 96, cpu_cores_effective: 24, instance: { loadingSec: 1 } });
  const gone404 = simOffer({ instance: { loadingSec: 1, afterDestroy: '404-not_found' } });
  let sim: VastSim;
  let vast: VastClient;
  beforeAll(async () => {
    sim = await startVastSim({ offers: [plain, gone404], apiKey: KEY });
    vast = new VastClient({ baseUrl: sim.url, apiKey: KEY });
  });
  afterAll(async () => sim?.close());
  const raw = (p: string, init: RequestInit = {}, key = KEY) =>
    fetch(sim.url + p, { ...init, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' } });

  it('offer rows: the fields the product reads, same types, same units', async () => {
    const res = await raw('/api/v0/bundles/', { method: 'POST', body: JSON.stringify({ id: { eq: plain.id } }) });
    const [row] = ((await res.json()) as { offers: Record<string, unknown>[] }).offers;
    const documented = (body('offer-search-capture').offers as Record<string, unknown>[])[0]!;
    expectSameContract(documented, row!, OFFER_FIELDS);
    // Filter-only inputs are never returned (§1.3).
    expect(row).not.toHaveProperty('verified');
    expect(row).not.toHaveProperty('datacenter');
  });

  it('create, show, destroy and the gone answers match the documented ones', async () => {
    const created = await raw(`/api/v0/asks/${plain.id}/`, {
      method: 'PUT',
      body: JSON.stringify({ client_id: 'me', image: 'img', disk: 20, label: 'conf-1', env: {} }),
    });
    const c = (await created.json()) as Record<string, unknown>;
    expect(created.status).toBe(fx('create-ok').response.status);
    expectSameContract(body('create-ok'), c, { success: 'boolean', new_contract: [1, 2 ** 53] });
    expect(typeof c.instance_api_key).toBe('string');
    const id = c.new_contract as number;

    let shown: Record<string, unknown> = {};
    for (let i = 0; i < 100 && shown.actual_status !== 'running'; i++) {
      shown = (
        (await (await raw(`/api/v0/instances/${id}/?owner=me`)).json()) as { instances: Record<string, unknown> }
      ).instances;
      await new Promise((r) => setTimeout(r, 50));
    }
    const documented = body('show-instance-openapi-example').instances as Record<string, unknown>;
    expectSameContract(documented, shown, INSTANCE_FIELDS);
    // HostPort is a string; ports exist only while running (§1.8).
    expect(shown.ports).toEqual({ '22/tcp': [{ HostIp: '0.0.0.0', HostPort: expect.any(String) }] });

    const again = await raw(`/api/v0/asks/${plain.id}/`, {
      method: 'PUT',
      body: JSON.stringify({ client_id: 'me', image: 'img', disk: 20, label: 'conf-2', env: {} }),
    });
    const gone = body('create-offer-gone-404');
    expect(again.status).toBe(fx('create-offer-gone-404').response.status);
    const a = (await again.json()) as Record<string, unknown>;
    expect(a.error).toBe(gone.error);
    expect(String(a.msg)).toMatch(/^error 404\/3603: no_such_ask /);

    const del = await raw(`/api/v0/instances/${id}/`, { method: 'DELETE', body: '{}' });
    expect(del.status).toBe(fx('destroy-ok').response.status);
    expect(await del.json()).toMatchObject(body('destroy-ok'));
    const del2 = await raw(`/api/v0/instances/${id}/`, { method: 'DELETE', body: '{}' });
    expect(del2.status).toBe(fx('destroy-gone-404').response.status);
    expect(await del2.json()).toEqual({ ...body('destroy-gone-404'), msg: `Instance ${id} not found.` });
    const after = await raw(`/api/v0/instances/${id}/?owner=me`);
    expect(after.status).toBe(200);
    expect(await after.json()).toEqual(body('show-instance-gone-null'));
    expect(await vast.showInstance(id)).toBeNull();
  });

  it('a scenario whose gone instance shows as 404 answers as the documented 404', async () => {
    const id = await vast.createInstance(gone404.id, { image: 'img', disk: 20, label: 'conf-3', env: {} });
    await vast.destroyInstance(id);
    const after = await raw(`/api/v0/instances/${id}/?owner=me`);
    expect(after.status).toBe(fx('show-instance-gone-404').response.status);
    expect(await after.json()).toEqual({ ...body('show-instance-gone-404'), msg: `Instance ${id} not found.` });
  });

  it('a bad key is answered with the documented body: 404 on DELETE, 401 on the list', async () => {
    const del = await raw('/api/v0/instances/5/', { method: 'DELETE', body: '{}' }, 'wrong');
    expect(del.status).toBe(fx('auth-404-destroy').response.status);
    expect(await del.json()).toEqual(body('auth-404-destroy'));
    const list = await raw('/api/v1/instances/?select_filters=%7B%7D&limit=25', {}, 'wrong');
    expect(list.status).toBe(fx('auth-401').response.status);
    expect(await list.json()).toEqual(body('auth-401'));
  });

  it('a rate limit is a plain-text 429 like the documented one', async () => {
    await fetch(`${sim.url}/_sim/chaos`, { method: 'POST', body: JSON.stringify({ rate429: 1, rate5xx: 0 }) });
    const res = await raw('/api/v0/bundles/', { method: 'POST', body: '{}' });
    await fetch(`${sim.url}/_sim/chaos`, { method: 'POST', body: JSON.stringify({ rate429: 0, rate5xx: 0 }) });
    expect(res.status).toBe(429);
    expect(await res.text()).toBe(fx('rate-limited-429').response.text);
  });
});
