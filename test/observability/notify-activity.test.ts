import { createHmac } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNotifyActivities, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../activities/notify/activities.js';
import type { NotifyEvent } from '../../activities/notify/event.js';
import { type Received, startReceiver } from './receiver.js';

/** The notify activity against a local receiver; the notices a lifecycle sends through the control worker are webhook.test.ts. */

const SECRET = 'webhook-secret-' + 'x'.repeat(24);
const event: NotifyEvent = {
  kind: 'kill',
  workflowId: 'lifecycle-1',
  instanceId: 4242,
  machineId: 77,
  gpu: 'RTX 4090',
  dphUsd: 0.82,
  failureType: 'BenchRateBelowMin',
  reason: '12 proofs/h is below the minimum of 20',
  at: new Date().toISOString(),
};

function verify(r: Received): boolean {
  const ts = String(r.headers[TIMESTAMP_HEADER]);
  const expected = 'sha256=' + createHmac('sha256', SECRET).update(`${ts}.${r.body}`).digest('hex');
  return r.headers[SIGNATURE_HEADER] === expected;
}

describe('notify activity against a local receiver', () => {
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => (rx = await startReceiver()));
  afterAll(async () => rx.close());
  const run = (deps: Parameters<typeof createNotifyActivities>[0], e: NotifyEvent) =>
    new MockActivityEnvironment().run(createNotifyActivities(deps).notify, e);

  it('is off by default: no URL, nothing sent', async () => {
    expect(await run({}, event)).toEqual({ sent: false });
    expect(rx.received).toHaveLength(0);
  });

  it('posts a Slack-compatible body, signed with HMAC-SHA256, carrying no secret', async () => {
    expect(await run({ url: rx.url, secret: SECRET }, event)).toEqual({ sent: true });
    const r = rx.received.at(-1)!;
    expect(r.headers['content-type']).toBe('application/json');
    expect(verify(r)).toBe(true);
    const body = JSON.parse(r.body) as { text: string; event: Record<string, unknown> };
    expect(body.text).toBe(
      'Instance killed: instance 4242, machine 77, RTX 4090, $0.82/h, BenchRateBelowMin — 12 proofs/h is below the minimum of 20 (lifecycle-1)',
    );
    expect(body.event).toMatchObject({
      kind: 'kill',
      instanceId: 4242,
      dphUsd: 0.82,
      failureType: 'BenchRateBelowMin',
    });
    expect(r.body).not.toContain(SECRET);
    expect(JSON.stringify(r.headers)).not.toContain(SECRET);
    // A body changed in transit no longer verifies.
    expect(verify({ ...r, body: r.body.replace('4242', '4243') })).toBe(false);
  });

  it('sends unsigned without a secret', async () => {
    await run({ url: rx.url }, { ...event, kind: 'promote', failureType: null, rateProofsPerHour: 35 });
    const r = rx.received.at(-1)!;
    expect(r.headers[SIGNATURE_HEADER]).toBeUndefined();
    expect((JSON.parse(r.body) as { text: string }).text).toMatch(/^Instance promoted: .*35 proofs\/h/);
  });

  it('retries a receiver error, gives up on a refusal, rejects a malformed event', async () => {
    rx.status.code = 503;
    await expect(run({ url: rx.url }, event)).rejects.toThrow(/HTTP 503/);
    rx.status.code = 404;
    const refused = await run({ url: rx.url }, event).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApplicationFailure);
    expect((refused as ApplicationFailure).nonRetryable).toBe(true);
    rx.status.code = 200;
    await expect(run({ url: rx.url }, { ...event, at: 'yesterday' })).rejects.toThrow(/at/);
  });

  it('a receiver that is down is an error to retry, not a refusal', async () => {
    const down = await startReceiver();
    await down.close();
    const err = await run({ url: down.url }, event).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err instanceof ApplicationFailure && err.nonRetryable).toBe(false);
    expect(String((err as Error).message) + String((err as Error).cause)).toMatch(/ECONNREFUSED|fetch failed/);
  });
});
