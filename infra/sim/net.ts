import { createHash } from 'node:crypto';
import http from 'node:http';

/**
 * The simulated internet a simulated host downloads from: a download-speed sample paced at the host's
 * link speed, and the benchmark's C1 input. One server per process (the Vast simulator's or a farm's).
 */
export const SIM_C1_JSON = JSON.stringify({
  SectorNum: 1,
  Phase1Out: Buffer.from('simulated-c1').toString('base64'),
  SectorSize: 34359738368,
});
export const SIM_C1_SHA256 = createHash('sha256').update(SIM_C1_JSON).digest('hex');

const TICK_MS = 10;

let started: Promise<string> | null = null;

/** Base URL of this process's simulated internet (started on first use, on port 0, never stopped). */
export function simNetUrl(): Promise<string> {
  return (started ??= listen());
}

/** A sample URL paced at `mbps` megabits per second (real-world time: a link speed is not compressed). */
export const sampleUrl = (base: string, mbps: number) => `${base}/sample?mbps=${mbps}`;

async function listen(): Promise<string> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://sim');
    if (url.pathname === '/c1.json') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(SIM_C1_JSON) });
      return res.end(SIM_C1_JSON);
    }
    if (url.pathname === '/sample') return pace(req, res, Number(url.searchParams.get('mbps')));
    res.writeHead(404).end('not found');
  });
  // Hosts come and go; an idle keep-alive socket must not hold the process open.
  server.keepAliveTimeout = 1000;
  server.unref();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  return `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
}

/** Serves the requested range of zeros at the link speed, in 10 ms ticks, until done or the client leaves. */
function pace(req: http.IncomingMessage, res: http.ServerResponse, mbps: number): void {
  if (!(mbps > 0)) {
    res.writeHead(400).end('mbps must be > 0');
    return;
  }
  const range = /^bytes=0-(\d+)$/.exec(req.headers.range ?? '');
  const total = range?.[1] ? Number(range[1]) + 1 : 64 * 2 ** 20;
  res.writeHead(range ? 206 : 200, { 'content-length': total, 'content-type': 'application/octet-stream' });
  // What the link has carried by now, not a fixed amount per tick: a late tick (a busy event loop) catches up.
  const bytesPerMs = (mbps * 1e6) / 8 / 1000;
  const began = Date.now();
  let sent = 0;
  const timer = setInterval(() => {
    const n = Math.min(Math.floor((Date.now() - began) * bytesPerMs) - sent, total - sent);
    if (n <= 0) return;
    sent += n;
    res.write(Buffer.alloc(n));
    if (sent >= total) {
      clearInterval(timer);
      res.end();
    }
  }, TICK_MS);
  res.on('close', () => clearInterval(timer));
}
