import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createVastActivities } from '../../activities/vast/activities.js';
import { VastClient } from '../../activities/vast/client.js';
import { gatewayPage } from '../../infra/sim/vast/mangle.js';

/**
 * The Vast activities' decisions on documented answers (test/sim/fixtures/vast, each naming its
 * source), served over HTTP in the order a test queues them.
 */
interface Answer {
  status: number;
  body?: unknown;
  text?: string;
}
const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'vast');
const documented = (name: string): Answer =>
  (JSON.parse(readFileSync(path.join(dir, `${name}.json`), 'utf8')) as { response: Answer }).response;

let queue: Answer[] = [];
const seen: string[] = [];
let server: http.Server;
let acts: ReturnType<typeof createVastActivities>;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const a = queue.shift() ?? { status: 500, text: 'test queued no answer' };
    if (a.text !== undefined) return void res.writeHead(a.status, { 'Content-Type': 'text/html' }).end(a.text);
    res.writeHead(a.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(a.body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  const vast = new VastClient({
    baseUrl: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`,
    apiKey: 'k',
  });
  acts = createVastActivities({ vast, hostEnv: {}, pollIntervalMs: 10 });
});
afterAll(() => server?.close());
beforeEach(() => {
  queue = [];
  seen.length = 0;
});

const run = <R>(fn: () => Promise<R>): Promise<R> => new MockActivityEnvironment().run(fn) as Promise<R>;
const failure = async (p: Promise<unknown>): Promise<ApplicationFailure> => {
  const err = await p.then(
    () => new Error('expected a failure'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
};
const running = documented('show-instance-openapi-example');

describe('destroy and its confirmation', () => {
  it('DELETE ok, then a show answering 404 not_found: destroyed', async () => {
    queue = [documented('destroy-ok'), documented('show-instance-gone-404')];
    expect(await run(() => acts.destroyInstance(312))).toEqual({ alreadyGone: false });
  });
  it('DELETE 404 no_such_instance, then a null show: already gone', async () => {
    queue = [documented('destroy-gone-404'), documented('show-instance-gone-null')];
    expect(await run(() => acts.destroyInstance(312))).toEqual({ alreadyGone: true });
  });
  it('DELETE answering 404 auth_error is an auth error, final, never "already gone"', async () => {
    queue = [documented('auth-404-destroy')];
    const f = await failure(run(() => acts.destroyInstance(312)));
    expect(f.type).toBe('VastApiError');
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toMatch(/API key/);
  });
  it('a truncated confirming show is retried, not a final failure', async () => {
    queue = [documented('destroy-ok'), { status: 200, text: '{"instances": {"id": 312, "actual_st' }];
    const f = await failure(run(() => acts.destroyInstance(312)));
    expect(f.type).toBe('VastApiError');
    expect(f.nonRetryable).toBe(false);
  });
  it('an instance still running after the DELETE is retried', async () => {
    queue = [documented('destroy-ok'), running];
    const f = await failure(run(() => acts.destroyInstance(312)));
    expect(f.message).toContain('still running after destroy');
    expect(f.nonRetryable).toBe(false);
  });
});

describe("the watch's read of Vast", () => {
  it('a running instance: its status and billed price', async () => {
    queue = [running];
    expect(await run(() => acts.instanceState(312))).toEqual({
      status: 'running',
      dph: 0.8021,
      // What an interruptible rental is judged by; the documentation sample is an on-demand instance.
      market: {
        minBidDph: 0.296,
        isBid: false,
        intendedStatus: 'running',
        curState: 'running',
        nextState: 'running',
        statusMsg: 'success, running nvidia/cuda_11.0.3-devel-ubuntu18.04/ssh',
      },
    });
  });
  it('gone (404 not_found or null) is evidence: status null, readable', async () => {
    queue = [documented('show-instance-gone-404'), documented('show-instance-gone-null')];
    expect(await run(() => acts.instanceState(312))).toEqual({ status: null, dph: 0 });
    expect(await run(() => acts.instanceState(312))).toEqual({ status: null, dph: 0 });
  });
  it('an HTML error page, a garbled answer or a refused key is no evidence: unreadable', async () => {
    queue = [
      { status: 503, text: gatewayPage(503) },
      { status: 200, text: '{"instances": {"id": "312"' },
      documented('auth-401'),
    ];
    for (let i = 0; i < 3; i++) {
      const r = await run(() => acts.instanceState(312));
      expect(r.unreadable, JSON.stringify(r)).toEqual(expect.any(String));
    }
  });
});

describe('awaitRunning', () => {
  it('an instance whose show answers 404 (not auth) vanished: InstanceNeverRunning', async () => {
    queue = [documented('show-instance-gone-404')];
    const f = await failure(run(() => acts.awaitRunning({ instanceId: 312, deadlineMs: Date.now() + 60_000 })));
    expect(f.type).toBe('InstanceNeverRunning');
    expect(f.message).toContain('vanished');
  });
});

describe('offer search', () => {
  it('keeps the usable rows and reports the dropped one', async () => {
    const capture = (documented('offer-search-capture').body as { offers: unknown[] }).offers[0];
    const abridged = (documented('offer-search-openapi-example').body as { offers: unknown[] }).offers[0];
    queue = [{ status: 200, body: { offers: [capture, abridged] } }];
    const res = await run(() => acts.searchOffers({ allocated_storage: 5 }));
    expect(res.offers.map((o) => o.offerId)).toEqual([11684738]);
    expect(res.dropped.count).toBe(1);
    expect(res.dropped.firstReason).toMatch(/offer 12345\): machine_id/);
  });
});
