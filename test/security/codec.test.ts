import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AesGcmCodec } from '../../workers/setup/codec/aes-gcm-codec.js';
import { codecFromEnv, ENCODING } from '../../workers/setup/codec/aes-gcm-codec.js';
import { startCodecServer } from '../../workers/setup/codec/codec-server.js';
import { expectPromoted } from '../helpers/expect-promoted.js';
import { instanceLifecycle, lifecycleStatusQuery } from '../../workflows/index.js';
import { API_KEY, fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { historyText } from '../helpers/history-text.js';
import { cancelAndWait } from '../helpers/cancel-and-wait.js';
import { simOffer } from '../helpers/offers.js';

const k1 = randomBytes(32).toString('base64');
const k2 = randomBytes(32).toString('base64');
const payload = (text: string) => ({
  metadata: { encoding: Buffer.from('json/plain') },
  data: Buffer.from(JSON.stringify(text)),
});

describe('AES-GCM payload codec', () => {
  it('round-trips, and rotates keys by key id', async () => {
    const old = codecFromEnv(`k1:${k1}`, 'k1') as AesGcmCodec;
    const [enc] = await old.encode([payload('RTX 4090 machine 38877')]);
    expect(Buffer.from(enc!.metadata!.encoding!).toString()).toBe(ENCODING);
    expect(Buffer.from(enc!.data!).toString()).not.toContain('RTX 4090');
    const rotated = codecFromEnv(`k1:${k1},k2:${k2}`, 'k2') as AesGcmCodec;
    const [dec] = await rotated.decode([enc!]);
    expect(Buffer.from(dec!.data!).toString()).toBe('"RTX 4090 machine 38877"');
    const [enc2] = await rotated.encode([payload('x')]);
    expect(Buffer.from(enc2!.metadata!['encryption-key-id']!).toString()).toBe('k2');
    await expect(old.decode([enc2!])).rejects.toThrow(/key id "k2", which is not configured/);
  });

  it('rejects tampered ciphertext and bad key material', async () => {
    const codec = codecFromEnv(`k1:${k1}`, 'k1') as AesGcmCodec;
    const [enc] = await codec.encode([payload('secret')]);
    const data = Buffer.from(enc!.data!);
    data[20] = (data[20] ?? 0) ^ 0xff;
    await expect(codec.decode([{ ...enc!, data }])).rejects.toThrow();
    expect(() => codecFromEnv('k1:c2hvcnQ=', 'k1')).toThrow(/32 bytes/);
    expect(() => codecFromEnv(`k1:${k1}`, 'k9')).toThrow(/k9 is not among/);
  });
});

describe('encrypted histories, end to end', () => {
  const offer = simOffer({ gpu_name: 'RTX 4090 ENCRYPTED', host: { proofSec: 100 } });
  let env: FleetEnv;
  beforeAll(async () => {
    env = await startFleetEnv([offer], {
      security: {
        PAYLOAD_KEYS: `k1:${k1},k2:${k2}`,
        PAYLOAD_KEY_ID: 'k2',
        HOST_PAYLOAD_KEYS: `k1:${k1},k2:${k2}`,
        HOST_PAYLOAD_KEY_ID: 'k2',
      },
    });
  });
  afterAll(async () => env?.close());

  it('stores only ciphertext: a client without the key sees no plaintext, one with it sees the lifecycle', async () => {
    const id = `encrypted-${offer.id}`;
    const handle = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: id,
      args: [fastRequest(offer.id, { minRate: 29 })],
    });
    await expectPromoted(env.client, id);
    expect((await handle.query(lifecycleStatusQuery)).gpuName).toBe('RTX 4090 ENCRYPTED');

    const plainConn = await Connection.connect({ address: inject('temporalAddress') });
    try {
      const history = await new Client({ connection: plainConn }).workflow.getHandle(id).fetchHistory();
      // Search attributes stay plaintext by Temporal's design (they are indexed); everything else is ciphertext.
      const text = historyText(history, ['searchAttributes']);
      expect(text).toContain(ENCODING);
      // Activity inputs/results (offer facts, rates, logs) and the workflow input are all ciphertext.
      expect(text).not.toContain('ENCRYPTED');
      expect(text).not.toContain('"offerId"');
      expect(text).not.toContain('cuzk_daemon');
    } finally {
      await plainConn.close();
    }

    const codec = codecFromEnv(`k1:${k1},k2:${k2}`, 'k2') as AesGcmCodec;
    const server = await startCodecServer({ codec, port: 0, token: 'ops-token', allowOrigin: 'http://127.0.0.1:8233' });
    try {
      const addr = server.address();
      const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
      const [enc] = await codec.encode([payload('decoded for operators')]);
      const body = JSON.stringify({
        payloads: [
          {
            metadata: Object.fromEntries(
              Object.entries(enc!.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')]),
            ),
            data: Buffer.from(enc!.data!).toString('base64'),
          },
        ],
      });
      const denied = await fetch(`${url}/decode`, { method: 'POST', body });
      expect(denied.status).toBe(401);
      const ok = await fetch(`${url}/decode`, { method: 'POST', body, headers: { Authorization: 'Bearer ops-token' } });
      const decoded = (await ok.json()) as { payloads: Array<{ data: string }> };
      expect(Buffer.from(decoded.payloads[0]!.data, 'base64').toString()).toBe('"decoded for operators"');
    } finally {
      server.close();
    }
    await cancelAndWait(env.client, handle.workflowId);
  });
});

describe('recorded histories hold no secrets', () => {
  it('finds no API key, bearer token, database password or payload key in any recorded history', () => {
    const dir = path.resolve('test/replay/histories');
    const secrets = [API_KEY, k1, k2, process.env.VAST_API_KEY, process.env.PAYLOAD_KEYS].filter((s): s is string =>
      Boolean(s),
    );
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
      const raw = readFileSync(path.join(dir, file), 'utf8');
      // Payload data is base64 inside the JSON: decode every payload before scanning.
      const decoded = [...raw.matchAll(/"data":\s*"([A-Za-z0-9+/=]+)"/g)]
        .map((m) => Buffer.from(m[1]!, 'base64').toString('utf8'))
        .join('\n');
      const text = raw + '\n' + decoded;
      expect(decoded.length, `${file} has payloads`).toBeGreaterThan(100);
      for (const secret of secrets) expect(text.includes(secret), `${file} contains a configured secret`).toBe(false);
      expect(text, file).not.toMatch(/Bearer\s+[A-Za-z0-9._-]{8,}/);
      expect(text, file).not.toMatch(/postgres(ql)?:\/\/[^:/\s]+:[^@\s]+@/);
      expect(text, file).not.toMatch(/VAST_API_KEY|PAYLOAD_KEYS/);
    }
  });
});
