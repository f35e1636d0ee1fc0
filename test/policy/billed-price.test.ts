import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createVastActivities, offerFacts } from '../../activities/vast/activities.js';
import { VastClient } from '../../activities/vast/client.js';
import { billedDph, expectedDph, storageDph } from '../../activities/vast/pricing.js';
import { OfferSchema, ShowInstanceResponseSchema } from '../../activities/vast/schemas.js';
import { offerQuery } from '../../workflows/domain/policy/offer-filter.js';
import { DEFAULT_DISK_GB, withDefaults } from '../../workflows/domain/policy/defaults.js';

// Each fixture names its source in `_source`.
const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/vast-pricing/${name}`, import.meta.url), 'utf8')) as {
    _source: string;
    allocated_storage?: number;
    billed_at_200gb?: number;
    offer?: unknown;
    body?: unknown;
  };

const filter = { gpuModels: ['RTX 4090'], minRamMb: 64_000, minReliability: 0.9, minCuda: 12, maxOfferDph: 0.5 };

describe('the price Vast bills, storage included', () => {
  it('every offer query asks Vast to price the disk the lifecycle rents', () => {
    expect(offerQuery(filter, 200)).toMatchObject({ allocated_storage: 200, dph_total: { lte: 0.5 } });
    expect(offerQuery(filter, 80).allocated_storage).toBe(80);
    expect(withDefaults({ offerId: 1 }).diskGb).toBe(DEFAULT_DISK_GB);
    expect(() => withDefaults({ offerId: 1, diskGb: 5 })).toThrow(/diskGb must be >= 8/);
  });

  it('storage arithmetic reproduces the real 2024 capture (5 GiB, the CLI default)', () => {
    const f = fixture('offer-capture-2024.json');
    const offer = OfferSchema.parse(f.offer);
    expect(storageDph(5, offer.storage_cost!)).toBeCloseTo(9.25925925925926e-6, 12);
    expect(expectedDph(offer, f.allocated_storage!)).toBeCloseTo(offer.dph_total, 6);
    // At our 200 GB the same offer costs more than it was searched at.
    expect(expectedDph(offer, 200)).toBeCloseTo(0.24666667 + (200 * 0.00133333) / 720, 6);
  });

  it('a storage-heavy 2025 offer searched at 8 GiB bills three times as much at 200 GB', () => {
    const f = fixture('offer-storage-heavy-2025.json');
    const offer = OfferSchema.parse(f.offer);
    const facts = offerFacts(offer, 200);
    expect(facts.searchedDph).toBe(0.116);
    expect(facts.dphTotal).toBeCloseTo(f.billed_at_200gb!, 3);
    expect(facts.dphTotal / facts.searchedDph!).toBeGreaterThan(3);
    expect(facts.storageCost).toBe(offer.storage_cost);
    // A row without the price breakdown keeps the price Vast quoted for the allocated_storage we sent.
    const { dph_base: _b, storage_cost: _s, ...bare } = offer;
    expect(offerFacts(OfferSchema.parse(bare), 200).dphTotal).toBe(0.116);
  });

  it('reads the billed price from the instance (OpenAPI example), and nothing from a missing one', () => {
    const f = fixture('show-instance-openapi.json');
    const inst = ShowInstanceResponseSchema.parse(f.body).instances;
    expect(billedDph(inst)).toBe(0.8021);
    expect(billedDph(null)).toBeNull();
    expect(billedDph({ dph_total: null })).toBeNull();
    expect(billedDph({ dph_total: 0 })).toBeNull();
  });

  it('refuses an offer search that does not say which disk to price', async () => {
    const acts = createVastActivities({
      vast: new VastClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'unused' }),
      hostEnv: {},
    });
    await expect(acts.searchOffers({ gpu_name: { eq: 'RTX 4090' } })).rejects.toThrow(/allocated_storage/);
  });
});
