import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One DELETE of an instance that passed through the proxy, with the status the simulator gave it. */
export interface DestroySeen {
  instanceId: number;
  status: number;
  answered: boolean;
}

/**
 * A pass-through HTTP proxy in front of the Vast simulator that can carry out instance destroys and
 * swallow their answers, as when the caller dies while the destroy is in flight. It counts every destroy
 * the simulator carried out, so a test can tell "destroyed once" from "asked twice".
 */
export interface VastProxy {
  url: string;
  destroys: DestroySeen[];
  /** While true, destroys reach the simulator but their answers never reach the caller. */
  swallowDestroyAnswers: boolean;
  close(): Promise<void>;
}

export async function startVastProxy(target: string): Promise<VastProxy> {
  const upstream = new URL(target);
  const held = new Set<http.ServerResponse>();
  const proxy: VastProxy = {
    url: '',
    destroys: [],
    swallowDestroyAnswers: false,
    async close() {
      for (const res of held) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const destroy = req.method === 'DELETE' ? /^\/api\/v0\/instances\/(\d+)\/?$/.exec(req.url ?? '') : null;
    const swallow = destroy !== null && proxy.swallowDestroyAnswers;
    const out = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (up) => {
        if (destroy)
          proxy.destroys.push({ instanceId: Number(destroy[1]), status: up.statusCode ?? 0, answered: !swallow });
        if (swallow) {
          up.resume();
          held.add(res);
          return;
        }
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
