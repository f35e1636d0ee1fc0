import { createHmac } from 'node:crypto';
import { ApplicationFailure, log } from '@temporalio/activity';
import { NotifyEventSchema, type NotifyEvent, webhookBody } from './event.js';

export interface NotifyDeps {
  /** Off when unset: notify() then does nothing. */
  url?: string;
  /** With a secret, every request is signed (HMAC-SHA256 of `<timestamp>.<body>`). */
  secret?: string;
  timeoutMs?: number;
}

export const SIGNATURE_HEADER = 'x-gpu-fleet-signature';
export const TIMESTAMP_HEADER = 'x-gpu-fleet-timestamp';

export function sign(secret: string, timestamp: string, body: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/** Sends a fleet event to the operator's webhook. The URL and secret come from the worker's env only. */
export async function notify(deps: NotifyDeps, input: NotifyEvent): Promise<{ sent: boolean }> {
  const event = NotifyEventSchema.parse(input);
  if (!deps.url) return { sent: false };
  const body = JSON.stringify(webhookBody(event));
  const timestamp = String(Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (deps.secret) {
    headers[TIMESTAMP_HEADER] = timestamp;
    headers[SIGNATURE_HEADER] = sign(deps.secret, timestamp, body);
  }
  const res = await fetch(deps.url, {
    method: 'POST',
    headers,
    body,
    signal: AbortSignal.timeout(deps.timeoutMs ?? 5000),
  });
  // The receiver's answer is not echoed: it might reflect the request back.
  if (res.status >= 400 && res.status < 500 && res.status !== 429) {
    throw ApplicationFailure.nonRetryable(`webhook refused the notification: HTTP ${res.status}`, 'WebhookRefused');
  }
  if (!res.ok) throw new Error(`webhook answered HTTP ${res.status}`);
  log.info('notification sent', { kind: event.kind, workflowId: event.workflowId });
  return { sent: true };
}

export function createNotifyActivities(deps: NotifyDeps) {
  return {
    notify: (input: NotifyEvent) => notify(deps, input),
    /** Whether this worker has a webhook: lifecycles started without one run no notify step at all. */
    webhookConfigured: async () => Boolean(deps.url),
  };
}

export type NotifyActivities = ReturnType<typeof createNotifyActivities>;
