import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVastActivities, offerFacts } from '../../activities/vast/activities.js';
import { outbidEvidence } from '../../activities/vast/bids.js';
import { VastClient } from '../../activities/vast/client.js';
import { ChangeBidResponseSchema, InstanceSchema, OfferSchema } from '../../activities/vast/schemas.js';
import { simStorageDph } from '../../infra/sim/vast/pricing.js';
import { startVastSim, type VastSim } from '../../infra/sim/vast/server.js';
import { bidCandidates } from '../../workflows/domain/policy/capacity-mix.js';
import { bidCapDph, bidFor, BidPolicySchema, raiseTo, validateBidPolicy } from '../../workflows/domain/policy/bid.js';
import { simOffer } from '../helpers/offers.js';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'vast-bids');
const fixture = (name: string) =>
  JSON.parse(readFileSync(path.join(dir, `${name}.json`), 'utf8')) as {
    source: string;
    request: { body?: Record<string, unknown> };
    response: { status: number; body: Record<string, unknown> };
  };

describe('the bid cap', () => {
  const open = { marginPct: 10, maxBidDph: 128, rebids: 0 };
  it('caps every bid at change bid’s 32 $/h per GPU, whatever the policy allows', () => {
    expect(bidCapDph(open, 1)).toBe(32);
    expect(bidCapDph(open, 2)).toBe(64);
    expect(bidCapDph(open, 8)).toBe(128);
    expect(bidCapDph({ ...open, maxBidDph: 0.5 }, 8)).toBe(0.5);
    expect(bidFor(29, open, 1)).toBe(31.9);
    expect(bidFor(30, open, 1)).toBeNull();
    expect(bidFor(30, open, 2)).toBe(33);
    // A raise stops at the cap: min_bid 29.5 would want 32.45 $/h on one GPU.
    expect(raiseTo(30.5, 29.5, open, 1)).toBeNull();
    expect(raiseTo(30.5, 29.5, open, 2)).toBe(32.45);
  });

  it('states the range where the policy is validated (zod), naming the field', () => {
    expect(() => validateBidPolicy({ ...open, maxBidDph: 129 })).toThrow(
      /bid\.maxBidDph must be 0\.001\.\.128 \$\/h .*capped at 32 \$\/h per GPU.*got 129/,
    );
    expect(() => validateBidPolicy({ ...open, marginPct: -1 })).toThrow(/bid\.marginPct must be 0\.\.1000 %, got -1/);
    expect(() => validateBidPolicy({ ...open, rebids: 1.5 })).toThrow(/bid\.rebids must be a whole number 0\.\.5/);
    expect(() => validateBidPolicy(open)).not.toThrow();
    expect(BidPolicySchema.shape.maxBidDph.description).toMatch(/32 \$\/h per GPU/);
  });
});

describe('documented bid answers (test/fixtures/vast-bids)', () => {
  it('a bid search row carries min_bid; bidding 15 % above it rounds up to a tenth of a cent', () => {
    const f = fixture('bid-search-request');
    expect(f.request.body?.type).toBe('bid');
    const offer = OfferSchema.parse((f.response.body.offers as unknown[])[0]);
    const facts = offerFacts(offer, 5);
    expect(facts.minBid).toBe(0.2);
    const [c] = bidCandidates([facts], { onDemandFloorRate: 0, bidMarginPct: 15, maxBidFraction: 1, rebids: 0 }, 5);
    expect(c?.bid.priceDph).toBe(0.23);
    // Billed as the bid plus storage for the disk, the price a cost figure counts.
    expect(c?.dphTotal).toBeCloseTo(0.23 + (5 * 0.0013333333333333335) / 720, 6);
  });

  it('an outbid instance (every state field stopped) is the market stopping it; the running example is not', () => {
    const stopped = InstanceSchema.parse(fixture('outbid-instance-stopped').response.body.instances);
    expect(outbidEvidence(stopped, 0.25)).toMatch(/min_bid \$0\.296\/h > our bid \$0\.25\/h/);
    const running = InstanceSchema.parse(
      (
        JSON.parse(
          readFileSync(
            path.join(dir, '..', '..', 'sim', 'fixtures', 'vast', 'show-instance-openapi-example.json'),
            'utf8',
          ),
        ) as { response: { body: { instances: unknown } } }
      ).response.body.instances,
    );
    expect(outbidEvidence(running, 0.8)).toBeNull();
  });

  it("change bid's documented answer parses, and a create refused for its bid names the contract it made", () => {
    const change = fixture('change-bid-openapi');
    expect(ChangeBidResponseSchema.parse(change.response.body).success).toBe(true);
    expect(change.request.body).toEqual({ client_id: 'me', price: 0.17 });
    expect(fixture('create-bid-too-low').response.body).toMatchObject({ success: false, new_contract: 12345679 });
    expect(fixture('create-bid-request').request.body).toMatchObject({ price: 0.23, cancel_unavail: false });
  });
});

describe('the simulated market and the Vast activities over HTTP', () => {
  const KEY = 'sim-bids-key';
  const steady = simOffer({ dph_total: 0.5, storage_cost: 0.1, market: { minBid: 0.2 } });
  const rising = simOffer({ dph_total: 0.5, market: { minBid: 0.2, minBidPath: [{ atSec: 400, minBid: 0.45 }] } });
  // Searches show the min_bid of a day ago (0.2); the market's is 0.25 since the start: the first bid is refused.
  const lagging = simOffer({
    dph_total: 0.5,
    market: { minBid: 0.2, minBidPath: [{ atSec: 0, minBid: 0.25 }], searchLagSec: 86_400 },
  });
  const laggingCapped = simOffer({
    dph_total: 0.5,
    market: { minBid: 0.2, minBidPath: [{ atSec: 0, minBid: 0.4 }], searchLagSec: 86_400 },
  });
  // One GPU whose market is above change bid's 32 $/h per GPU: a bid there could never be raised.
  const pricey = simOffer({
    num_gpus: 1,
    gpu_ram: 81_559,
    gpu_name: 'H100 SXM',
    dph_total: 60,
    market: { minBid: 30 },
  });
  let sim: VastSim;
  let acts: ReturnType<typeof createVastActivities>;
  let vast: VastClient;
  beforeAll(async () => {
    sim = await startVastSim({
      offers: [steady, rising, lagging, laggingCapped, pricey],
      apiKey: KEY,
      // No GPU-host processes: these tests are about Vast's side of the rental.
      bootHost: () => Promise.resolve({ workDir: '', alive: true, kill() {} }),
    });
    vast = new VastClient({ baseUrl: sim.url, apiKey: KEY });
    acts = createVastActivities({ vast, hostEnv: {}, pollIntervalMs: 50 });
  });
  afterAll(async () => sim?.close());

  const run = <R>(fn: () => Promise<R>): Promise<R> => new MockActivityEnvironment().run(fn) as Promise<R>;
  const rent = (offerId: number, maxBidDph: number, rebids = 1) =>
    run(() =>
      acts.rentOffer({
        offerId,
        label: `bids-${offerId}`,
        image: 'img',
        diskGb: 200,
        hostTaskQueue: 'q',
        bid: { marginPct: 15, maxBidDph, rebids },
      }),
    );
  const failure = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => new Error('expected a failure'),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  };

  it('rents at min_bid x 1.15, billed as the bid plus storage, and changes the bid', async () => {
    const r = await rent(steady.id, 0.4);
    expect(r.bid?.priceDph).toBe(bidFor(0.2, { marginPct: 15, maxBidDph: 1, rebids: 0 }, 2));
    expect(r.bid?.priceDph).toBeGreaterThanOrEqual(0.2 * 1.15);
    expect(r.offer.dphTotal).toBeCloseTo(0.23 + simStorageDph(200, 0.1), 6);
    const inst = await vast.showInstance(r.instanceId);
    expect(inst).toMatchObject({ is_bid: true, dph_base: 0.23, min_bid: 0.2 });
    await run(() => acts.changeBid({ instanceId: r.instanceId, priceDph: 0.3 }));
    expect(await vast.showInstance(r.instanceId)).toMatchObject({ dph_base: 0.3 });
    // Vast's range for a changed bid is 0.001 to 32 $/h per GPU (64 for these two): above it a refusal, in
    // Vast's words, never retried.
    expect(await run(() => acts.changeBid({ instanceId: r.instanceId, priceDph: 64 }))).toEqual({
      priceDph: 64,
      gone: false,
    });
    const f = await failure(run(() => acts.changeBid({ instanceId: r.instanceId, priceDph: 64.5 })));
    expect(f).toMatchObject({ type: 'VastApiError', nonRetryable: true });
    expect(f.message).toMatch(/invalid_args/);
  });

  it('change bid on an instance that is gone (404 no_such_instance) reads as gone, not an API error', async () => {
    const r = await rent(steady.id, 0.4);
    await run(() => acts.destroyInstance(r.instanceId));
    expect(await run(() => acts.changeBid({ instanceId: r.instanceId, priceDph: 0.3 }))).toEqual({
      priceDph: 0.3,
      gone: true,
    });
    // The simulator answers as the documented example does.
    const documented = fixture('change-bid-404-no-such-instance').response;
    const raw = await fetch(`${sim.url}/api/v0/instances/bid_price/${r.instanceId}/`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: 'me', price: 0.3 }),
    });
    expect(raw.status).toBe(documented.status);
    expect(await raw.json()).toMatchObject({ success: false, error: documented.body.error });
  });

  it('never bids above what change bid accepts: a 1-GPU offer whose bid would pass 32 $/h is not rented', async () => {
    const f = await failure(rent(pricey.id, 100, 0));
    expect(f).toMatchObject({ type: 'BidTooLow', nonRetryable: true });
    expect(f.message).toMatch(/would pass the cap of \$32\/h/);
    expect(sim.ledger().filter((l) => l.offerId === pricey.id)).toHaveLength(0);
  });

  it("stops an instance when min_bid rises past its bid on the simulator's clock: every state field stopped", async () => {
    const r = await rent(rising.id, 0.4);
    const deadline = Date.now() + 20_000;
    let state = await run(() => acts.instanceState(r.instanceId));
    while (state.status !== 'stopped' && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 200));
      state = await run(() => acts.instanceState(r.instanceId));
    }
    expect(state.status).toBe('stopped');
    expect(state.market).toMatchObject({
      minBidDph: 0.45,
      isBid: true,
      intendedStatus: 'stopped',
      curState: 'stopped',
      nextState: 'stopped',
    });
    const row = sim.ledger().find((l) => l.id === r.instanceId);
    expect(row).toMatchObject({ destroyed: false, bid: 0.23 });
    // GPU billing stops with it; the disk goes on billing until it is destroyed.
    expect(row?.stoppedAt).not.toBeNull();
    await run(() => acts.destroyInstance(r.instanceId));
  });

  it('a bid too low at create: the stopped instance is destroyed and a higher bid placed', async () => {
    const r = await rent(lagging.id, 0.4, 1);
    expect(r.bid?.history.bids.map((b) => [b.priceDph, b.why])).toEqual([
      [0.23, 'rent'],
      [0.265, 'rebid-at-create'],
    ]);
    const mine = sim.ledger().filter((l) => l.offerId === lagging.id);
    expect(mine).toHaveLength(2);
    expect(mine.filter((l) => l.destroyed).map((l) => l.bid)).toEqual([0.23]);
    expect(mine.find((l) => !l.destroyed)).toMatchObject({ bid: 0.265 });
  });

  it('every allowed bid too low: BidTooLow with the bids as evidence, nothing left billing', async () => {
    const f = await failure(rent(laggingCapped.id, 0.3, 1));
    expect(f).toMatchObject({ type: 'BidTooLow', nonRetryable: true });
    const details = f.details?.[0] as { bidHistory: { bids: Array<{ priceDph: number }> } };
    expect(details.bidHistory.bids.map((b) => b.priceDph)).toEqual([0.23, 0.265]);
    expect(f.message).toMatch(/2 bid\(s\) up to \$0\.265\/h were all under min_bid/);
    const mine = sim.ledger().filter((l) => l.offerId === laggingCapped.id);
    expect(mine.length).toBe(2);
    expect(mine.every((l) => l.destroyed)).toBe(true);
  });
});
