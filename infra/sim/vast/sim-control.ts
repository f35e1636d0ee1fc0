import type http from 'node:http';
import { SimOfferSchema } from '../scenario.js';
import { ledgerRows } from './instance-view.js';
import { type Chaos, chaosRandomFor, json, readBody, type VastState } from './state.js';

type Res = http.ServerResponse;

/** The test and demo control plane (`/_sim/*`), outside the Vast API's paths. */
export async function simControl(st: VastState, method: string, p: string, req: http.IncomingMessage, res: Res) {
  if (method === 'GET' && p === '/_sim/ledger') return json(res, 200, ledgerRows(st));
  if (method === 'GET' && p === '/_sim/stats') return json(res, 200, st.stats);
  if (method !== 'POST') return json(res, 404, { ok: false });
  if (p === '/_sim/chaos') {
    st.chaos = (await readBody(req)) as Chaos;
    st.chaosRandom = chaosRandomFor(st.chaos);
    return json(res, 200, { ok: true });
  }
  if (p === '/_sim/outage') {
    // A Vast outage: every API call meets a gateway's HTML error page for this many seconds.
    const { sec } = (await readBody(req)) as { sec: number };
    st.outageUntil = Date.now() + sec * 1000;
    return json(res, 200, { ok: true, until: new Date(st.outageUntil).toISOString() });
  }
  if (p === '/_sim/offers') return listOffer(st, req, res);
  return offerOrInstanceControl(st, p, req, res);
}

/** A host listing a new offer during a run (the market bench's day); an id already listed is refused. */
async function listOffer(st: VastState, req: http.IncomingMessage, res: Res) {
  const parsed = SimOfferSchema.safeParse(await readBody(req));
  if (!parsed.success) return json(res, 400, { ok: false, error: parsed.error.message });
  if (st.offers.has(parsed.data.id))
    return json(res, 409, { ok: false, error: `offer ${parsed.data.id} is already listed` });
  st.offers.set(parsed.data.id, parsed.data);
  return json(res, 200, { ok: true });
}

/** POST /_sim/offers/{id}/… and /_sim/instances/{id}/…: the market and hosts acting on one offer or instance. */
async function offerOrInstanceControl(st: VastState, p: string, req: http.IncomingMessage, res: Res) {
  let m: RegExpExecArray | null;
  if ((m = /^\/_sim\/offers\/(\d+)\/take$/.exec(p))) {
    st.taken.add(Number(m[1]));
    return json(res, 200, { ok: true });
  }
  if ((m = /^\/_sim\/offers\/(\d+)\/race$/.exec(p))) {
    st.racedAway.add(Number(m[1]));
    return json(res, 200, { ok: true });
  }
  if ((m = /^\/_sim\/offers\/(\d+)\/min_bid$/.exec(p))) {
    // The market moves now (tests, the bench): bids under the new min_bid stop within a tick.
    const { minBid } = (await readBody(req)) as { minBid: number };
    if (!(typeof minBid === 'number' && minBid > 0)) return json(res, 400, { ok: false, error: 'minBid ($/h) > 0' });
    st.market.set(Number(m[1]), minBid);
    return json(res, 200, { ok: true });
  }
  if ((m = /^\/_sim\/instances\/(\d+)\/price$/.exec(p))) {
    // A host raising its price on a running contract.
    const inst = st.instances.get(Number(m[1]));
    if (!inst) return json(res, 404, { ok: false });
    inst.dph = ((await readBody(req)) as { dph: number }).dph;
    return json(res, 200, { ok: true });
  }
  if ((m = /^\/_sim\/instances\/(\d+)\/preempt$/.exec(p))) {
    const inst = st.instances.get(Number(m[1]));
    if (!inst) return json(res, 404, { ok: false });
    inst.host?.kill();
    inst.actual_status = 'offline';
    return json(res, 200, { ok: true });
  }
  return json(res, 404, { ok: false });
}
