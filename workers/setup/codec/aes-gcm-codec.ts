import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
// CommonJS package: Node's ESM loader sees only its default export.
import proto from '@temporalio/proto';

const { temporal } = proto;

export const ENCODING = 'binary/encrypted';
const KEY_ID_META = 'encryption-key-id';

/**
 * AES-256-GCM payload codec. Every workflow/activity input, result, heartbeat and failure detail is
 * encrypted before it leaves the process, so history holds ciphertext only. Keys come from the
 * environment (`PAYLOAD_KEYS`); new payloads use the active key id, old ones decrypt with the key
 * id written in their metadata — rotation is: add a key, make it active, keep the old one until no
 * history needs it.
 */
export class AesGcmCodec implements PayloadCodec {
  constructor(
    private readonly keys: ReadonlyMap<string, Buffer>,
    private readonly activeKeyId: string,
  ) {
    if (!keys.has(activeKeyId))
      throw new Error(`active payload key id ${activeKeyId} is not among the configured keys`);
    for (const [id, key] of keys)
      if (key.length !== 32) throw new Error(`payload key ${id} must be 32 bytes (base64 of 32 random bytes)`);
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const key = this.keys.get(this.activeKeyId) as Buffer;
    return payloads.map((p) => {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const plain = temporal.api.common.v1.Payload.encode(p).finish();
      const body = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: { encoding: Buffer.from(ENCODING), [KEY_ID_META]: Buffer.from(this.activeKeyId) },
        data: body,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => {
      if (Buffer.from(p.metadata?.encoding ?? []).toString() !== ENCODING) return p;
      const keyId = Buffer.from(p.metadata?.[KEY_ID_META] ?? []).toString();
      const key = this.keys.get(keyId);
      if (!key) throw new Error(`payload was encrypted with key id "${keyId}", which is not configured`);
      const body = Buffer.from(p.data ?? []);
      const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, 12));
      decipher.setAuthTag(body.subarray(body.length - 16));
      const plain = Buffer.concat([decipher.update(body.subarray(12, body.length - 16)), decipher.final()]);
      return temporal.api.common.v1.Payload.decode(plain);
    });
  }
}

/** `PAYLOAD_KEYS="k2025:<base64>,k2026:<base64>"` and `PAYLOAD_KEY_ID=k2026`. */
export function codecFromEnv(keysSpec: string | undefined, activeKeyId: string | undefined): AesGcmCodec | null {
  if (!keysSpec) return null;
  const keys = new Map<string, Buffer>();
  for (const entry of keysSpec.split(',')) {
    const i = entry.indexOf(':');
    if (i <= 0) throw new Error('PAYLOAD_KEYS must be "id:base64key[,id:base64key]"');
    keys.set(entry.slice(0, i).trim(), Buffer.from(entry.slice(i + 1).trim(), 'base64'));
  }
  const active = activeKeyId ?? [...keys.keys()].pop();
  if (!active) throw new Error('PAYLOAD_KEY_ID is required when PAYLOAD_KEYS is set');
  return new AesGcmCodec(keys, active);
}
