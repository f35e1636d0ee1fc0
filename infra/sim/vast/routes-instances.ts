import { simStorageDph } from './pricing.js';
import { matchesQuery } from './query.js';
import { invalidBid } from './bids.js';
import { destroy, schedule } from './instance-life.js';
import { publicInstance } from './instance-view.js';
import type { Sink } from './mangle.js';
import { json, type VastState } from './state.js';

const noSuchInstance = (res: Sink, id: string) =>
  json(res, 404, { success: false, error: 'no_such_instance', msg: `Instance ${id} not found.` });

/** PUT /api/v0/instances/bid_price/{id}/: change an interruptible instance's bid. */
export function changeBid(st: VastState, id: string, body: unknown, res: Sink): void {
  // Change bid (change_bid.yaml: body {client_id, price}, price 0.001 to 32 $/h per GPU, answer {"success": true};
  // out of range 400 invalid_args, a gone instance 404 no_such_instance).
  const inst = st.instances.get(Number(id));
  const req = body as Record<string, unknown>;
  if (!inst || inst.destroyed) return noSuchInstance(res, id);
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
  if (inst.outbid && inst.bid >= st.market.minBid(inst.offer)) {
    inst.outbid = null;
    inst.intended_status = 'running';
    inst.cur_state = 'running';
    inst.actual_status = null;
    inst.runningAt = null;
    schedule(st, inst);
  }
  return json(res, 200, { success: true });
}

/** GET /api/v0/instances/{id}/: one instance, or null (or a 404, as the scenario says) once destroyed. */
export function showInstance(st: VastState, id: number, res: Sink): void {
  const inst = st.instances.get(id);
  const after = inst?.destroyed ? inst.offer.sim.instance.afterDestroy : 'null';
  if (after !== 'null') {
    // Some answers for a gone instance are a 404, as vast-cli's self-test accepts after a destroy.
    const error = after === '404-not_found' ? 'not_found' : 'no_such_instance';
    return json(res, 404, { success: false, error, msg: `Instance ${id} not found.` });
  }
  return json(res, 200, { instances: inst && !inst.destroyed ? publicInstance(st, inst) : null });
}

/** DELETE /api/v0/instances/{id}/. */
export function deleteInstance(st: VastState, id: string, res: Sink): void {
  const inst = st.instances.get(Number(id));
  if (!inst || inst.destroyed) return noSuchInstance(res, id);
  destroy(st, inst);
  return json(res, 200, { success: true });
}

/** GET /api/v1/instances/: our live instances, filtered by select_filters, paged by after_token. */
export function listInstances(st: VastState, url: URL, res: Sink): void {
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
  const all = [...st.instances.values()]
    .filter((i) => !i.destroyed && i.id > after)
    .map((i) => publicInstance(st, i))
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
