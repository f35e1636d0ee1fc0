import { type SimOffer } from '../scenario.js';
import { simBilledDph, simStorageDph } from './pricing.js';
import { invalidBid } from './bids.js';
import { schedule, stopOutbid } from './instance-life.js';
import type { Sink } from './mangle.js';
import { json, type SimInstance, type VastState } from './state.js';

/** PUT /api/v0/asks/{id}/: rent an offer (§1.4), on demand or interruptible with a bid (`price`). */
export function createInstance(st: VastState, offerId: number, body: unknown, res: Sink): void {
  const req = body as Record<string, unknown>;
  const offer = st.offers.get(offerId);
  if (!offer || st.taken.has(offerId) || st.racedAway.has(offerId)) {
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
  const minBid = st.market.minBid(offer);
  const underBid = bid !== null && bid < minBid;
  if (underBid && req.cancel_unavail === true) {
    // Told not to make an instance it cannot schedule now: refused as unschedulable (§1.4, 410).
    return json(res, 410, {
      success: false,
      error: 'no_such_ask',
      msg: `error 410/3907: no_such_ask Instance type ${offerId} is no longer available.`,
    });
  }
  st.taken.add(offerId);
  const inst = newInstance(st.nextId++, offer, req, bid);
  st.instances.set(inst.id, inst);
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
  schedule(st, inst);
  return json(res, 200, { success: true, new_contract: inst.id, instance_api_key: `sim-${inst.id}` });
}

function newInstance(id: number, offer: SimOffer, req: Record<string, unknown>, bid: number | null): SimInstance {
  const disk = req.disk as number;
  return {
    id,
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
