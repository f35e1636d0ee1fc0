import type http from 'node:http';
import { Captured, gatewayPage, type Mangle, mangleAnswer } from './mangle.js';
import { route } from './routes.js';
import { type ApiCall, json, type VastState } from './state.js';

/**
 * A bad day at Vast, for an authenticated API call: an outage, rate limits and 5xx, answers lost or late,
 * creates refused, gateway pages, answers spoilt on their way back. What is left is routed as asked.
 * The draws from the chaos PRNG happen in a fixed order, so a seeded run replays exactly.
 */
export async function answerWithChaos(
  st: VastState,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  call: ApiCall,
): Promise<void> {
  if (answerOutage(st, res)) return;
  const roll = st.chaosRandom();
  if (refuseByRoll(st, roll, res)) return;
  const isCreate = call.method === 'PUT' && call.p.startsWith('/api/v0/asks/');
  if (await loseAnswer(st, req, call, roll, isCreate)) return;
  if (isCreate && createFault(st, req, res, call)) return;
  const spoil = isCreate && (st.chaos.garbleCreateAnswers ?? 0) > 0 ? garbleCreate(st) : rollSpoil(st, res);
  if (spoil === 'answered') return;
  if (!spoil) return route(st, call, res);
  await spoiltAnswer(st, call, res, spoil);
}

function answerOutage(st: VastState, res: http.ServerResponse): boolean {
  if (Date.now() >= st.outageUntil) return false;
  st.stats.outageAnswers++;
  const status = st.stats.outageAnswers % 2 ? 503 : 504;
  res.writeHead(status, { 'Content-Type': 'text/html' });
  res.end(gatewayPage(status));
  return true;
}

function refuseByRoll(st: VastState, roll: number, res: http.ServerResponse): boolean {
  const { chaos, stats } = st;
  if (roll < chaos.rate429) {
    stats.injected429++;
    res.writeHead(429, { 'Content-Type': 'text/plain' });
    res.end('API requests too frequent endpoint threshold=4.5');
    return true;
  }
  if (roll < chaos.rate429 + chaos.rate5xx) {
    stats.injected5xx++;
    json(res, 503, { detail: 'Service Unavailable' });
    return true;
  }
  return false;
}

/** No answer at all (the client times out); some of these calls are carried out first. */
async function loseAnswer(
  st: VastState,
  req: http.IncomingMessage,
  call: ApiCall,
  roll: number,
  isCreate: boolean,
): Promise<boolean> {
  const { chaos, stats } = st;
  const loseThisCreate = isCreate && (chaos.loseCreateAnswers ?? 0) > 0;
  if (!loseThisCreate && roll >= chaos.rate429 + chaos.rate5xx + (chaos.rateTimeout ?? 0)) return false;
  stats.injectedTimeouts++;
  if (loseThisCreate) chaos.loseCreateAnswers = (chaos.loseCreateAnswers ?? 1) - 1;
  // A create whose answer is lost is how a careless client rents twice: half of these are done first.
  if (loseThisCreate || st.chaosRandom() < 0.5) {
    await route(st, call, new Captured());
    if (isCreate) stats.lostCreateAnswers++;
  }
  setTimeout(() => req.socket.destroy(), 120_000).unref();
  return true;
}

/** Creates refused on credit, or reaching Vast after the client gave up on them. */
function createFault(st: VastState, req: http.IncomingMessage, res: http.ServerResponse, call: ApiCall): boolean {
  const { chaos, stats } = st;
  if ((chaos.refuseCreates ?? 0) > 0) {
    chaos.refuseCreates = (chaos.refuseCreates ?? 1) - 1;
    stats.refusedCreates++;
    json(res, 200, { success: false, error: 'insufficient_credit', msg: 'Insufficient credit' });
    return true;
  }
  if ((chaos.lateCreates ?? 0) > 0) {
    // The request reaches Vast after the client gave up on it: it is carried out then, answered to no one.
    chaos.lateCreates = (chaos.lateCreates ?? 1) - 1;
    stats.lateCreates++;
    setTimeout(() => void route(st, call, new Captured()), chaos.lateCreateMs ?? 5_000);
    setTimeout(() => req.socket.destroy(), 120_000).unref();
    return true;
  }
  return false;
}

function garbleCreate(st: VastState): Mangle {
  st.chaos.garbleCreateAnswers = (st.chaos.garbleCreateAnswers ?? 1) - 1;
  st.stats.garbledCreateAnswers++;
  return 'truncate';
}

/** A gateway's HTML page instead of the call ('answered'), or how the answer will be spoilt, or null. */
function rollSpoil(st: VastState, res: http.ServerResponse): Mangle | null | 'answered' {
  const { chaos, stats } = st;
  const r = st.chaosRandom();
  const html = chaos.rateHtml ?? 0;
  const trunc = chaos.rateTruncated ?? 0;
  if (r < html) {
    stats.injectedHtml++;
    res.writeHead(502, { 'Content-Type': 'text/html' });
    res.end(gatewayPage(502));
    return 'answered';
  }
  if (r < html + trunc) return 'truncate';
  if (r < html + trunc + (chaos.rateWrongTypes ?? 0)) return 'wrongTypes';
  return null;
}

/** Carried out at Vast; only the answer is spoilt on its way back (2xx answers only). */
async function spoiltAnswer(st: VastState, call: ApiCall, res: http.ServerResponse, spoil: Mangle): Promise<void> {
  const captured = new Captured();
  await route(st, call, captured);
  if (captured.status >= 300) {
    res.writeHead(captured.status, captured.headers);
    return void res.end(captured.body);
  }
  if (spoil === 'truncate') st.stats.injectedTruncated++;
  else st.stats.injectedWrongTypes++;
  res.writeHead(captured.status, captured.headers);
  res.end(mangleAnswer(captured.body, spoil));
}
