import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VastClient } from '../../activities/vast/client.js';
import { startVastSim, type VastSim } from '../../infra/sim/vast/server.js';
import { simOffer } from '../helpers/offers.js';

const KEY = 'sim-key';
const MODEL = `SIM-PRICE-${Date.now()}`;
// Cheapest at Vast's 8 GiB default, dearest at our 200 GB (the 2025 offer of issue #18's shape).
const storageHeavy = simOffer({ gpu_name: MODEL, dph_total: 0.116, storage_cost: 0.93375 });
const plain = simOffer({ gpu_name: MODEL, dph_total: 0.3, storage_cost: 0.05 });
let sim: VastSim;
let vast: VastClient;

beforeAll(async () => {
  sim = await startVastSim({ offers: [storageHeavy, plain], apiKey: KEY });
  vast = new VastClient({ baseUrl: sim.url, apiKey: KEY });
});
afterAll(async () => sim?.close());

const search = (extra: Record<string, unknown> = {}) =>
  vast.searchOffers({ gpu_name: { eq: MODEL }, order: [['dph_total', 'asc']], ...extra });

describe('the simulator prices offers and instances as Vast does', () => {
  it('prices a search for 8 GiB when it sends no allocated_storage, and for the disk it sends', async () => {
    const at8 = await search();
    expect(at8.map((o) => o.id)).toEqual([storageHeavy.id, plain.id]);
    expect(at8[0]?.dph_total).toBeCloseTo(0.116, 6);
    const at200 = await search({ allocated_storage: 200 });
    // Storage reverses the rank.
    expect(at200.map((o) => o.id)).toEqual([plain.id, storageHeavy.id]);
    const heavy = at200.find((o) => o.id === storageHeavy.id)!;
    expect(heavy.dph_total).toBeCloseTo(0.365, 3);
    expect(heavy.dph_total).toBeCloseTo(heavy.dph_base! + (200 * heavy.storage_cost!) / 720, 9);
    expect(heavy).toMatchObject({ storage_cost: 0.93375, search: { totalHour: heavy.dph_total } });
  });

  it('filters dph_total at the searched storage, and rejects a storage that is not a number', async () => {
    expect((await search({ dph_total: { lte: 0.35 } })).map((o) => o.id)).toEqual([storageHeavy.id, plain.id]);
    expect((await search({ dph_total: { lte: 0.35 }, allocated_storage: 200 })).map((o) => o.id)).toEqual([plain.id]);
    await expect(search({ allocated_storage: 'lots' })).rejects.toThrow(/400/);
  });

  it('bills an instance for the disk it was created with', async () => {
    const id = await vast.createInstance(storageHeavy.id, { image: 'img', disk: 200, label: 'price-test', env: {} });
    const inst = await vast.showInstance(id);
    expect(inst?.dph_total).toBeCloseTo(0.365, 3);
    expect(inst).toMatchObject({ disk_space: 200, storage_cost: 0.93375 });
    expect(sim.ledger().find((l) => l.id === id)?.dph).toBeCloseTo(0.365, 3);
    await vast.destroyInstance(id);
  });
});
