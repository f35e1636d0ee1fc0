import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import { timeScale } from '../scenario.js';
import { answerWithChaos } from './chaos.js';
import { startMarketTick } from './instance-life.js';
import { ledgerRows } from './instance-view.js';
import { badKeyStatus } from './mangle.js';
import { simControl } from './sim-control.js';
import { json, newVastState, readBody, type VastSimOptions, type VastState } from './state.js';

export type { Chaos, VastSimOptions } from './state.js';

export interface VastSim {
  url: string;
  /** Every instance ever created, for tests' leak checks. */
  ledger(): Array<{
    id: number;
    dph: number;
    createdAt: number;
    runningAt: number | null;
    stoppedAt: number | null;
    destroyedAt: number | null;
    /** The bid of an interruptible instance ($/h); null for on-demand. */
    bid: number | null;
    offerId: number;
    machineId: number;
    label: string;
    status: string | null;
    destroyed: boolean;
    hostAlive: boolean;
  }>;
  close(): Promise<void>;
}

/**
 * Simulated Vast.ai API: same paths, fields, units (RAM in MB) and error shapes as the real one
 * (../shared/reference/vast-api.md). Rented instances go created -> loading -> running and then boot a
 * simulated GPU host running the real GPU-host worker.
 */
export async function startVastSim(opts: VastSimOptions): Promise<VastSim> {
  const baseDir = opts.baseDir ?? mkdtempSync(path.join(os.tmpdir(), 'vast-sim-'));
  const st = newVastState(opts, timeScale(), baseDir);
  const marketTick = startMarketTick(st);
  const server = http.createServer((req, res) => {
    handle(st, req, res).catch((err: unknown) => {
      if (err instanceof SyntaxError)
        return json(res, 400, { success: false, error: 'invalid_request', msg: 'body is not JSON' });
      json(res, 500, { success: false, error: 'server_error', msg: err instanceof Error ? err.message : String(err) });
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    ledger: () => ledgerRows(st),
    async close() {
      st.closed = true;
      clearInterval(marketTick);
      for (const inst of st.instances.values()) {
        inst.timers.forEach(clearTimeout);
        inst.host?.kill();
      }
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function handle(st: VastState, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://sim');
  const p = url.pathname;
  const method = req.method ?? 'GET';

  // Test and demo control plane, outside the Vast API's paths.
  if (p.startsWith('/_sim/')) return simControl(st, method, p, req, res);

  // Search works without any key (gpuhunt searches unauthenticated); a wrong key is refused.
  const key = req.headers.authorization;
  const anonymousSearch = key === undefined && method === 'POST' && p === '/api/v0/bundles/';
  if (key !== `Bearer ${st.opts.apiKey}` && !anonymousSearch) {
    return json(res, badKeyStatus(method, p), { success: false, error: 'auth_error', msg: 'Invalid user key' });
  }
  const body = await readBody(req);
  st.stats.calls++;
  if (st.chaos.slowMs) await new Promise((r) => setTimeout(r, st.chaos.slowMs));
  return answerWithChaos(st, req, res, { body, url, p, method });
}
