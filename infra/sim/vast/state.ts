import type http from 'node:http';
import { type SimOffer } from '../scenario.js';
import { BidMarket } from './bids.js';
import { type BootedHost, type HostBooter } from './host-boot.js';
import type { Sink } from './mangle.js';
import { seededRandom } from '../random.js';

export interface SimInstance {
  id: number;
  offer: SimOffer;
  label: string;
  env: Record<string, string>;
  image: string;
  actual_status: string | null;
  intended_status: string;
  /** Contract state: running while the machine is allocated to us, stopped when Vast will not run it. */
  cur_state: string;
  status_msg: string;
  start_date: number;
  /** GB of disk it was created with: storage bills on it. */
  disk: number;
  destroyed: boolean;
  dph: number;
  /** The bid ($/h, Vast's `price`) of an interruptible instance; null for on-demand. */
  bid: number | null;
  /** Set when the market stopped it (a bid under min_bid): when, and the min_bid that did it. */
  outbid: { at: number; minBid: number } | null;
  /** Wall-clock ms: GPU time bills from running to destroy. */
  createdAt: number;
  runningAt: number | null;
  /** Wall-clock ms the market stopped it (GPU billing stops there; storage goes on). */
  stoppedAt: number | null;
  destroyedAt: number | null;
  host: BootedHost | null;
  hostExit: string | null;
  timers: NodeJS.Timeout[];
}

export interface VastSimOptions {
  offers: SimOffer[];
  apiKey: string;
  port?: number;
  baseDir?: string;
  /** How rented machines come up: a GPU-host worker process each (default), or the host farm for scale runs. */
  bootHost?: HostBooter;
  /** Fraction of API calls answered 429 / 503, for chaos tests; `seed` makes the sequence repeatable. */
  chaos?: Chaos;
}

export interface Chaos {
  rate429: number;
  rate5xx: number;
  /** Calls that get no answer at all (the client times out); half of them are carried out first. */
  rateTimeout?: number;
  /** The next this many instance creates are carried out, but their answers never arrive. */
  loseCreateAnswers?: number;
  /** Fraction of calls answered by a gateway's HTML error page (502/504), not carried out. */
  rateHtml?: number;
  /** Fraction of calls carried out whose 200 answer is cut off mid-JSON. */
  rateTruncated?: number;
  /** Fraction of calls carried out whose 200 answer has numbers as strings and booleans as numbers. */
  rateWrongTypes?: number;
  /** The next this many creates are carried out but answered with a truncated body. */
  garbleCreateAnswers?: number;
  /** The next this many creates are refused with HTTP 200 success:false (as Vast refuses on credit). */
  refuseCreates?: number;
  /** The next this many creates reach Vast this many ms late (after the client gave up on them). */
  lateCreates?: number;
  lateCreateMs?: number;
  /** Every answer takes this long (a slow Vast). */
  slowMs?: number;
  seed?: number;
}

/** What the simulator counts, for tests and the bench (`/_sim/stats`). */
export interface ChaosStats {
  calls: number;
  injected429: number;
  injected5xx: number;
  injectedTimeouts: number;
  lostCreateAnswers: number;
  injectedHtml: number;
  injectedTruncated: number;
  injectedWrongTypes: number;
  garbledCreateAnswers: number;
  refusedCreates: number;
  lateCreates: number;
  outageAnswers: number;
}

/** Everything one simulated Vast knows: its market, the instances rented from it, and today's chaos. */
export interface VastState {
  opts: VastSimOptions;
  scale: number;
  baseDir: string;
  offers: Map<number, SimOffer>;
  instances: Map<number, SimInstance>;
  taken: Set<number>;
  /** Offers still listed but rented by someone else the moment we try: the search-then-create race. */
  racedAway: Set<number>;
  nextId: number;
  chaos: Chaos;
  chaosRandom: () => number;
  stats: ChaosStats;
  /** Epoch ms until which every API call meets a gateway error page (a Vast outage). */
  outageUntil: number;
  market: BidMarket;
  /** The simulator is shutting down: a machine still booting is stopped as soon as it is up. */
  closed: boolean;
}

/** One API call as the routes see it: the parsed body and where it was sent. */
export interface ApiCall {
  body: unknown;
  url: URL;
  p: string;
  method: string;
}

export function newVastState(opts: VastSimOptions, scale: number, baseDir: string): VastState {
  const chaos: Chaos = opts.chaos ?? { rate429: 0, rate5xx: 0 };
  return {
    opts,
    scale,
    baseDir,
    offers: new Map(opts.offers.map((o) => [o.id, o])),
    instances: new Map(),
    taken: new Set(),
    racedAway: new Set(),
    closed: false,
    nextId: 30_000_000 + Math.floor(Math.random() * 1_000_000),
    chaos,
    chaosRandom: chaosRandomFor(chaos),
    stats: {
      calls: 0,
      injected429: 0,
      injected5xx: 0,
      injectedTimeouts: 0,
      lostCreateAnswers: 0,
      injectedHtml: 0,
      injectedTruncated: 0,
      injectedWrongTypes: 0,
      garbledCreateAnswers: 0,
      refusedCreates: 0,
      lateCreates: 0,
      outageAnswers: 0,
    },
    outageUntil: 0,
    market: new BidMarket(Date.now(), scale),
  };
}

export const chaosRandomFor = (chaos: Chaos): (() => number) =>
  chaos.seed === undefined ? Math.random : seededRandom(chaos.seed);

export const json = (res: Sink, status: number, body: unknown) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};

export async function readBody(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return {};
  return JSON.parse(text);
}
