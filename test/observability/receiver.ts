import http from 'node:http';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A local webhook receiver that records every POST and answers `status` (200 unless told). */
export async function startReceiver(): Promise<{
  url: string;
  received: Received[];
  status: { code: number };
  close(): Promise<void>;
}> {
  const received: Received[] = [];
  const status = { code: 200 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(status.code, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}/hooks/fleet`,
    received,
    status,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
