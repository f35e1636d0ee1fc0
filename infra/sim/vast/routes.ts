import type { Sink } from './mangle.js';
import { createInstance } from './routes-create.js';
import { changeBid, deleteInstance, listInstances, showInstance } from './routes-instances.js';
import { searchOffers } from './routes-offers.js';
import { type ApiCall, json, type VastState } from './state.js';

/** The Vast API's routes, past the key check and chaos: each answers into `res` (a real answer or a capture). */
export async function route(st: VastState, call: ApiCall, res: Sink): Promise<void> {
  const { method, p } = call;
  let m: RegExpExecArray | null;
  if (method === 'POST' && p === '/api/v0/bundles/') return searchOffers(st, call, res);
  if (method === 'PUT' && (m = /^\/api\/v0\/asks\/(\d+)\/$/.exec(p))) {
    return createInstance(st, Number(m[1]), call.body, res);
  }
  if (method === 'PUT' && (m = /^\/api\/v0\/instances\/bid_price\/(\d+)\/$/.exec(p))) {
    return changeBid(st, m[1] ?? '', call.body, res);
  }
  if (method === 'GET' && (m = /^\/api\/v0\/instances\/(\d+)\/$/.exec(p))) return showInstance(st, Number(m[1]), res);
  if (method === 'DELETE' && (m = /^\/api\/v0\/instances\/(\d+)\/$/.exec(p)))
    return deleteInstance(st, m[1] ?? '', res);
  if (method === 'GET' && p === '/api/v0/instances/') {
    return json(res, 410, {
      success: false,
      error: 'deprecated_endpoint',
      msg: '/api/v0/instances/ is deprecated. Use /api/v1/instances/ instead.',
    });
  }
  if (method === 'GET' && p === '/api/v1/instances/') return listInstances(st, call.url, res);
  if (method === 'GET' && (p === '/api/v0/users/current' || p === '/api/v0/users/current/')) {
    return json(res, 200, { id: 1, username: 'sim', email: 'sim@example.invalid', credit: 1000, balance: 1000 });
  }
  return json(res, 404, { success: false, error: 'not_found', msg: `no route for ${method} ${p}` });
}
