import http from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VastClient, VastHttpError, VastResponseShapeError } from '../../activities/vast/client.js';
import { OfferSchema } from '../../activities/vast/schemas.js';
import { checkHostEnv, ControlConfigSchema, hostEnvFromConfig, loadConfig } from '../../workers/setup/config.js';

// A server whose next answer the test sets: the client must parse it or refuse it naming the field.
let next: { status: number; body: string } = { status: 200, body: '{}' };
let server: http.Server;
let url = '';
beforeAll(async () => {
  server = http.createServer((_req, res) =>
    res.writeHead(next.status, { 'Content-Type': 'application/json' }).end(next.body),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
});
afterAll(() => server?.close());

const goodOffer = fc.record({
  id: fc.integer({ min: 1, max: 2 ** 31 }),
  machine_id: fc.nat(),
  host_id: fc.nat(),
  gpu_name: fc.string({ minLength: 1 }),
  num_gpus: fc.integer({ min: 1, max: 16 }),
  gpu_ram: fc.nat(),
  cpu_ram: fc.nat(),
  dph_total: fc.double({ min: 0, max: 100, noNaN: true }),
});
// Any JSON value in any field: wrong types, nulls, negative numbers, missing keys, extra keys.
const anyOffer = fc.dictionary(
  fc.constantFrom(
    'id',
    'machine_id',
    'host_id',
    'gpu_name',
    'num_gpus',
    'gpu_ram',
    'cpu_ram',
    'dph_total',
    'reliability2',
    'extra',
  ),
  fc.jsonValue(),
);

describe('Vast response parsing (property)', () => {
  it('accepts every well-formed offer list and keeps every offer', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(goodOffer, { maxLength: 20 }), async (offers) => {
        next = { status: 200, body: JSON.stringify({ offers }) };
        const parsed = await new VastClient({ baseUrl: url, apiKey: 'k' }).searchOffers({});
        expect(parsed.map((o) => o.id)).toEqual(offers.map((o) => o.id));
      }),
      { numRuns: 60 },
    );
  });

  it('keeps every good row, drops each malformed one with a reason naming the field, never anything else', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(goodOffer, anyOffer), { minLength: 1, maxLength: 5 }), async (offers) => {
        next = { status: 200, body: JSON.stringify({ offers }) };
        const good = offers.filter((o) => OfferSchema.safeParse(o).success);
        try {
          const report = await new VastClient({ baseUrl: url, apiKey: 'k' }).searchOffersReport({});
          expect(report.offers.map((o) => o.id)).toEqual(good.map((o) => o.id));
          expect(report.dropped.count).toBe(offers.length - good.length);
          if (report.dropped.count > 0) expect(report.dropped.firstReason).toMatch(/^row \d+.*: [a-z_0-9.]+: /);
        } catch (err) {
          // Only a page with not one usable row is refused as a whole (a garbled answer).
          expect(good).toHaveLength(0);
          expect(err).toBeInstanceOf(VastResponseShapeError);
          expect((err as Error).message).toMatch(/no usable offer row; first: row 0/);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('treats non-JSON and error bodies as typed errors', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.constantFrom(200, 400, 404, 429, 500, 503), async (body, status) => {
        next = { status, body };
        const err = await new VastClient({ baseUrl: url, apiKey: 'k' }).showInstance(1).then(
          () => null,
          (e: unknown) => e,
        );
        if (status !== 200) expect(err).toBeInstanceOf(VastHttpError);
        else if (err !== null) expect(err).toBeInstanceOf(VastResponseShapeError);
      }),
      { numRuns: 100 },
    );
  });
});

describe('configuration errors name the variable', () => {
  it('lists every bad variable at once', () => {
    expect(() =>
      loadConfig(ControlConfigSchema, { DATABASE_URL: 'not a url', VAST_POLL_INTERVAL_MS: '-5', METRICS_BIND: 'x' }),
    ).toThrow(
      /DATABASE_URL[\s\S]*VAST_API_KEY[\s\S]*VAST_POLL_INTERVAL_MS|DATABASE_URL[\s\S]*VAST_POLL_INTERVAL_MS[\s\S]*VAST_API_KEY/,
    );
    expect(() =>
      loadConfig(ControlConfigSchema, { DATABASE_URL: 'postgres://x@h/db', VAST_API_KEY: 'k', METRICS_BIND: 'nope' }),
    ).toThrow(/METRICS_BIND: must be host:port/);
  });
});

describe('host env entries fit Vast (256 characters per entry)', () => {
  const base = {
    DATABASE_URL: 'postgres://x@h/db',
    VAST_API_KEY: 'k',
    TEMPORAL_ADDRESS: 'temporal.example:7233',
  };
  it('accepts a short namespace-scoped key and one payload key id', () => {
    const cfg = loadConfig(ControlConfigSchema, { ...base, HOST_TEMPORAL_API_KEY: 'k'.repeat(200) });
    expect(() => checkHostEnv(hostEnvFromConfig(cfg))).not.toThrow();
  });
  it('refuses at start-up an entry over the cap, naming the variable and the limit', () => {
    // TEMPORAL_API_KEY=<240 chars> is 257 characters: one over.
    const cfg = loadConfig(ControlConfigSchema, {
      ...base,
      HOST_TEMPORAL_API_KEY: 'k'.repeat(240),
      HOST_PAYLOAD_KEYS: 'a'.repeat(100),
    });
    expect(() => checkHostEnv(hostEnvFromConfig(cfg))).toThrow(
      /HOST_TEMPORAL_API_KEY: becomes the host env entry TEMPORAL_API_KEY=\.\.\. of 257 characters; Vast accepts at most 256/,
    );
    expect(() => checkHostEnv(hostEnvFromConfig(cfg))).not.toThrow(/HOST_PAYLOAD_KEYS/);
    // The message never carries the value itself.
    expect(() => checkHostEnv(hostEnvFromConfig(cfg))).not.toThrow(/kkkk/);
  });
  it('passes a private CA for the host front as the host TEMPORAL_TLS_CA, and names it when too long', () => {
    const cfg = loadConfig(ControlConfigSchema, { ...base, HOST_TEMPORAL_TLS_CA: '/etc/gpu-fleet/ca.pem' });
    expect(hostEnvFromConfig(cfg)).toMatchObject({ TEMPORAL_TLS_CA: '/etc/gpu-fleet/ca.pem' });
    expect(hostEnvFromConfig(loadConfig(ControlConfigSchema, base))).not.toHaveProperty('TEMPORAL_TLS_CA');
    const long = loadConfig(ControlConfigSchema, { ...base, HOST_TEMPORAL_TLS_CA: '/' + 'd'.repeat(300) });
    expect(() => checkHostEnv(hostEnvFromConfig(long))).toThrow(/HOST_TEMPORAL_TLS_CA: becomes the host env entry/);
  });
});
