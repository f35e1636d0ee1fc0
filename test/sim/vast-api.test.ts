import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VastClient, VastHttpError } from '../../activities/vast/client.js';
import { startVastSim, type VastSim } from '../../infra/sim/vast/server.js';
import { simOffer } from '../helpers/offers.js';

const KEY = 'sim-key';
const a = simOffer({ gpu_name: 'RTX 4090', num_gpus: 1, dph_total: 0.4 });
const b = simOffer({ gpu_name: 'A40', num_gpus: 2, dph_total: 1.1, instance: { loadingSec: 100000 } });
let sim: VastSim;
let vast: VastClient;

beforeAll(async () => {
  sim = await startVastSim({ offers: [a, b], apiKey: KEY });
  vast = new VastClient({ baseUrl: sim.url, apiKey: KEY });
});
afterAll(async () => sim?.close());

const raw = (path: string, init: RequestInit = {}, key = KEY) =>
  fetch(sim.url + path, { ...init, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' } });

describe('simulated Vast.ai API answers as the reference says', () => {
  it('searches offers with the query format, RAM in MB, sorted by `order`', async () => {
    const offers = await vast.searchOffers({ gpu_name: { in: ['RTX 4090', 'A40'] }, order: [['dph_total', 'desc']] });
    expect(offers.map((o) => o.id)).toEqual([b.id, a.id]);
    expect(offers[0]?.cpu_ram).toBe(b.cpu_ram);
    expect(offers[0]).not.toHaveProperty('sim');
    expect(await vast.searchOffers({ num_gpus: { gte: 2 } })).toHaveLength(1);
  });

  it('rejects a bad key with auth_error: 404 on search and instance calls, 401 elsewhere', async () => {
    const body = { success: false, error: 'auth_error', msg: 'Invalid user key' };
    const search = await raw('/api/v0/bundles/', { method: 'POST', body: '{}' }, 'wrong');
    expect(search.status).toBe(404);
    expect(await search.json()).toEqual(body);
    const del = await raw('/api/v0/instances/123/', { method: 'DELETE', body: '{}' }, 'wrong');
    expect(del.status).toBe(404);
    expect(await del.json()).toEqual(body);
    const list = await raw('/api/v1/instances/', {}, 'wrong');
    expect(list.status).toBe(401);
    expect(await list.json()).toEqual(body);
    // The client reads the 404 as what it is: an auth error, not a gone instance.
    const err = await new VastClient({ baseUrl: sim.url, apiKey: 'wrong' })
      .destroyInstance(123)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VastHttpError);
    expect((err as VastHttpError).isAuth).toBe(true);
    expect((err as VastHttpError).isInstanceGone).toBe(false);
  });

  it('serves a search without any key (unauthenticated search works)', async () => {
    const res = await fetch(sim.url + '/api/v0/bundles/', { method: 'POST', body: '{}' });
    expect(res.status).toBe(200);
  });

  it('creates from an offer, then shows it as a single object; the v0 list is 410', async () => {
    const id = await vast.createInstance(b.id, { image: 'img', disk: 20, label: 'lbl-1', env: { A: '1' } });
    const shown = await vast.showInstance(id);
    expect(shown).toMatchObject({ id, machine_id: b.machine_id, label: 'lbl-1' });
    expect(['created', 'loading', null]).toContain(shown?.actual_status ?? null);
    const v0 = await raw('/api/v0/instances/?owner=me');
    expect(v0.status).toBe(410);
    expect(await v0.json()).toMatchObject({ error: 'deprecated_endpoint' });
    const listed = await vast.listInstances({ label: { eq: 'lbl-1' } });
    expect(listed.map((i) => i.id)).toEqual([id]);
  });

  it('answers a taken offer with 404 no_such_ask in msg', async () => {
    const err = await vast
      .createInstance(b.id, { image: 'img', disk: 20, label: 'x', env: {} })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VastHttpError);
    expect((err as VastHttpError).status).toBe(404);
    expect((err as VastHttpError).bodyText).toContain('no_such_ask');
    expect((err as VastHttpError).errorCode).toBe('invalid_args');
  });

  it('lists an offer added during a run (the market bench), once; a malformed one is 400', async () => {
    const c = simOffer({ gpu_name: 'RTX 3090', num_gpus: 1, dph_total: 0.2 });
    expect((await vast.searchOffers({ gpu_name: { eq: 'RTX 3090' } })).map((o) => o.id)).toEqual([]);
    const add = (body: unknown) => raw('/_sim/offers', { method: 'POST', body: JSON.stringify(body) });
    expect((await add(c)).status).toBe(200);
    expect((await vast.searchOffers({ gpu_name: { eq: 'RTX 3090' } })).map((o) => o.id)).toEqual([c.id]);
    expect((await add(c)).status).toBe(409);
    expect((await add({ id: 'x' })).status).toBe(400);
  });

  it('validates create bodies (disk >= 8 GB)', async () => {
    const res = await raw(`/api/v0/asks/${a.id}/`, { method: 'PUT', body: JSON.stringify({ image: 'i', disk: 2 }) });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ success: false, error: 'invalid_args' });
  });

  it('destroys: show returns instances:null, a second destroy is 404 no_such_instance', async () => {
    const [inst] = await vast.listInstances({ label: { eq: 'lbl-1' } });
    await vast.destroyInstance(inst!.id);
    expect(await vast.showInstance(inst!.id)).toBeNull();
    const err = await vast.destroyInstance(inst!.id).catch((e: unknown) => e);
    expect((err as VastHttpError).status).toBe(404);
    expect((err as VastHttpError).errorCode).toBe('no_such_instance');
  });

  it('rejects computed columns in v1 list filters', async () => {
    const res = await raw(`/api/v1/instances/?select_filters=${encodeURIComponent('{"dph_total":{"lt":1}}')}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ msg: 'Error in query parameters: dph_total is not a valid search key' });
  });

  it('answers 429 as plain text when rate limited', async () => {
    await fetch(`${sim.url}/_sim/chaos`, { method: 'POST', body: JSON.stringify({ rate429: 1, rate5xx: 0 }) });
    const res = await raw('/api/v0/bundles/', { method: 'POST', body: '{}' });
    await fetch(`${sim.url}/_sim/chaos`, { method: 'POST', body: JSON.stringify({ rate429: 0, rate5xx: 0 }) });
    expect(res.status).toBe(429);
    expect(await res.text()).toContain('API requests too frequent');
  });
});
