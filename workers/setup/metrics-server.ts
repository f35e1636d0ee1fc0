import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/**
 * The process's one /metrics: the fleet_* families of its registry (metrics-registry.ts, fleet-collector.ts)
 * followed by the Temporal SDK's own families, which the SDK's exporter serves on a loopback port of its own
 * (runtime.ts) and this server fetches at each scrape. The SDK's text is passed through `sdkExposition`.
 */
export interface MetricsEndpoint {
  /** http://host:port/metrics as bound (a port 0 bind names the port it got). */
  url: string;
  close(): Promise<void>;
}

/**
 * The SDK's exposition as we serve it: the exporter appends `_total` to counters whose names already end in
 * it (`temporal_local_activity_total_total`), which `promtool check metrics` flags; those lose the double
 * suffix. Any fleet_* family there would shadow ours (workflows report through the sink, not the SDK's
 * meter): dropped.
 */
export function sdkExposition(text: string): string {
  return text
    .split('\n')
    .filter((line) => !/^(# (HELP|TYPE) )?fleet_/.test(line))
    .map((line) => line.replace(/^((?:# (?:HELP|TYPE) )?[a-zA-Z_:][a-zA-Z0-9_:]*?)_total_total\b/, '$1_total'))
    .join('\n');
}

async function sdkText(sdkUrl: string | undefined): Promise<string> {
  if (!sdkUrl) return '';
  try {
    const res = await fetch(sdkUrl, { signal: AbortSignal.timeout(5000) });
    return res.ok ? sdkExposition(await res.text()) : '';
  } catch {
    // The SDK's families are missing from this scrape; ours are still served.
    return '';
  }
}

/** host:port → [host, port]; `0.0.0.0:0` binds a free port. */
function splitBind(bind: string): [string, number] {
  const i = bind.lastIndexOf(':');
  return [bind.slice(0, i), Number(bind.slice(i + 1))];
}

export async function serveMetrics(opts: {
  bind: string;
  registry?: Registry;
  sdkUrl?: string;
}): Promise<MetricsEndpoint> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404).end('not found: GET /metrics\n');
      return;
    }
    Promise.all([opts.registry?.metrics() ?? '', sdkText(opts.sdkUrl)])
      .then(([ours, sdk]) => {
        res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
        res.end([ours.trimEnd(), sdk.trimEnd()].filter(Boolean).join('\n') + '\n');
      })
      .catch((err: unknown) => res.writeHead(500).end(`metrics: ${String(err)}\n`));
  });
  const [host, port] = splitBind(opts.bind);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  // The worker's run keeps the process alive, not its metrics.
  server.unref();
  const addr = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    url: `http://${shownHost}:${addr.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A scraper's kept-alive connection would hold the close open.
        server.closeAllConnections();
      }),
  };
}

/** A free loopback port for the SDK's exporter (the Rust exporter cannot report a port 0 bind). */
export async function loopbackPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
