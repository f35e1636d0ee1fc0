import http from 'node:http';
import type { Payload, PayloadCodec } from '@temporalio/common';

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

const toPayload = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});
const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? []).toString('base64'),
});

/**
 * The codec server the Temporal UI calls (`POST /decode`, `POST /encode`, body `{payloads: [...]}`)
 * so authorised operators see plaintext in the browser while the server stores ciphertext. Requests
 * must carry `Authorization: Bearer <token>`; the UI forwards the operator's token when configured.
 */
export function startCodecServer(opts: {
  codec: PayloadCodec;
  port: number;
  host?: string;
  token: string;
  allowOrigin: string;
}): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    res.setHeader('Access-Control-Allow-Origin', opts.allowOrigin);
    res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', 'Content-Type, Authorization, X-Namespace');
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    if (req.method === 'OPTIONS') return void res.writeHead(204).end();
    const route = req.url?.split('?')[0];
    if (req.method !== 'POST' || (route !== '/decode' && route !== '/encode')) return void res.writeHead(404).end();
    if (req.headers.authorization !== `Bearer ${opts.token}`) return void res.writeHead(401).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { payloads?: JsonPayload[] };
          const payloads = (body.payloads ?? []).map(toPayload);
          const out = route === '/decode' ? await opts.codec.decode(payloads) : await opts.codec.encode(payloads);
          res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ payloads: out.map(toJson) }));
        } catch (err) {
          res
            .writeHead(400, { 'Content-Type': 'application/json' })
            .end(JSON.stringify({ error: err instanceof Error ? err.message : String(err) }));
        }
      })();
    });
  });
  return new Promise((resolve) => server.listen(opts.port, opts.host ?? '127.0.0.1', () => resolve(server)));
}
