import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  HOST_TOKEN_KEY_MIN_CHARS,
  mintHostToken,
  readHostToken,
  verifyHostToken,
} from '../../activities/vast/host-token.js';

/** The vectors the Go claim mapper passes too (infra/temporal/server/hostauth, `go test`). */
const Vectors = z.object({
  key: z.string(),
  now: z.number().int(),
  vectors: z.array(
    z.object({
      name: z.string(),
      token: z.string(),
      namespace: z.string().optional(),
      label: z.string().optional(),
      workflowId: z.string().optional(),
      expiry: z.number().int().optional(),
      error: z.enum(['', 'not-host-token', 'signature', 'malformed', 'expired']),
    }),
  ),
});
const file = Vectors.parse(
  JSON.parse(
    readFileSync(new URL('../../infra/temporal/server/hostauth/testdata/token-vectors.json', import.meta.url), 'utf8'),
  ),
);

describe('host tokens (same bytes and verdicts as the server)', () => {
  for (const v of file.vectors) {
    it(v.name, () => {
      const r = verifyHostToken(file.key, v.token, file.now * 1000);
      if (v.error) {
        expect(r).toEqual({ ok: false, error: v.error });
        return;
      }
      const claims = {
        namespace: v.namespace ?? '',
        label: v.label ?? '',
        workflowId: v.workflowId ?? '',
        expiresAtSec: v.expiry ?? 0,
      };
      expect(r).toEqual({ ok: true, claims });
      expect(mintHostToken(file.key, claims)).toBe(v.token);
    });
  }

  it('the vectors key is long enough for the server', () => {
    expect(file.key.length).toBeGreaterThanOrEqual(HOST_TOKEN_KEY_MIN_CHARS);
  });

  it('a host can read what it was given without the key, and a changed payload does not verify', () => {
    const claims = { namespace: 'default', label: 'gpufleet-a', workflowId: 'instance-offer-1', expiresAtSec: 2e9 };
    const token = mintHostToken(file.key, claims);
    expect(readHostToken(token)).toEqual(claims);
    const forged = mintHostToken(file.key, { ...claims, label: 'gpufleet-b' });
    const spliced = forged.slice(0, forged.lastIndexOf('.')) + token.slice(token.lastIndexOf('.'));
    expect(verifyHostToken(file.key, spliced, 0)).toEqual({ ok: false, error: 'signature' });
    expect(readHostToken('0123456789abcdef0123456789abcdef')).toBeNull();
  });

  it('refuses fields that would change the payload’s shape', () => {
    const ok = { namespace: 'default', label: 'gpufleet-a', workflowId: 'wf', expiresAtSec: 2e9 };
    expect(() => mintHostToken(file.key, { ...ok, workflowId: 'a\nb' })).toThrow(/workflow id/);
    expect(() => mintHostToken(file.key, { ...ok, label: '' })).toThrow(/label/);
    expect(() => mintHostToken(file.key, { ...ok, expiresAtSec: 1.5 })).toThrow(/seconds/);
  });
});
