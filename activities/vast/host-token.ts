import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Per-rental host tokens, the TypeScript half of infra/temporal/server/hostauth/token.go: the control
 * worker mints one per rental (GPU_FLEET_HOST_TOKEN_KEY), the server's claim mapper verifies it, and its
 * authorizer lets it poll only `host/<label>` and answer only that workflow's activity tasks
 * (docs/security.md). Both sides pass the vectors in hostauth/testdata/token-vectors.json.
 */
export const HOST_TOKEN_PREFIX = 'gfh1.';
export const HOST_TOKEN_KEY_MIN_CHARS = 32;
// HMAC-SHA256 truncated to 128 bits, as on the Go side: a full rental label must fit Vast's env entry.
const TAG_BYTES = 16;

export interface HostTokenClaims {
  namespace: string;
  /** The rental's label; its queue is host/<label>. */
  label: string;
  /** The lifecycle whose activity tasks the host may answer. */
  workflowId: string;
  /** Unix time in seconds after which the server refuses the token. */
  expiresAtSec: number;
}

export type HostTokenError = 'not-host-token' | 'signature' | 'malformed' | 'expired';

function tag(key: string, body: string): Buffer {
  return createHmac('sha256', key).update(body).digest().subarray(0, TAG_BYTES);
}

export function mintHostToken(key: string, c: HostTokenClaims): string {
  for (const [name, v] of [
    ['namespace', c.namespace],
    ['label', c.label],
    ['workflow id', c.workflowId],
  ] as const) {
    if (v === '' || v.includes('\n')) throw new Error(`host token ${name} must be non-empty and one line`);
  }
  if (!Number.isSafeInteger(c.expiresAtSec)) throw new Error('host token expiry must be whole seconds');
  const payload = [c.namespace, c.label, c.workflowId, String(c.expiresAtSec)].join('\n');
  const body = HOST_TOKEN_PREFIX + Buffer.from(payload, 'utf8').toString('base64url');
  return `${body}.${tag(key, body).toString('base64url')}`;
}

/** The payload without checking the tag: for a host, which has no key, to see what it was given. */
export function readHostToken(token: string): HostTokenClaims | null {
  if (!token.startsWith(HOST_TOKEN_PREFIX)) return null;
  const dot = token.lastIndexOf('.');
  if (dot < HOST_TOKEN_PREFIX.length) return null;
  const f = Buffer.from(token.slice(HOST_TOKEN_PREFIX.length, dot), 'base64url').toString('utf8').split('\n');
  const [namespace, label, workflowId, exp] = f;
  if (f.length !== 4 || !namespace || !label || !workflowId || !exp || !/^-?\d+$/.test(exp)) return null;
  return { namespace, label, workflowId, expiresAtSec: Number(exp) };
}

/** What the server decides, in the same order: tag first (constant time), then payload, then expiry. */
export function verifyHostToken(
  key: string,
  token: string,
  nowMs: number,
): { ok: true; claims: HostTokenClaims } | { ok: false; error: HostTokenError } {
  if (!token.startsWith(HOST_TOKEN_PREFIX)) return { ok: false, error: 'not-host-token' };
  const dot = token.lastIndexOf('.');
  if (dot < HOST_TOKEN_PREFIX.length) return { ok: false, error: 'malformed' };
  const sig = token.slice(dot + 1);
  const want = tag(key, token.slice(0, dot));
  const got = /^[A-Za-z0-9_-]*$/.test(sig) ? Buffer.from(sig, 'base64url') : Buffer.alloc(0);
  // One spelling per token, as the server's strict decoder: unused bits of the last character must be zero.
  const canonical = got.toString('base64url') === sig;
  if (got.length !== want.length || !timingSafeEqual(got, want) || !canonical) return { ok: false, error: 'signature' };
  const claims = readHostToken(token);
  if (!claims) return { ok: false, error: 'malformed' };
  if (nowMs >= claims.expiresAtSec * 1000) return { ok: false, error: 'expired' };
  return { ok: true, claims };
}

export const DEFAULT_HOST_TOKEN_TTL_DAYS = 90;

/** One rental, as the rent activity knows it (its own workflow's id and namespace, the label it rents under). */
export interface Rental {
  namespace: string;
  label: string;
  workflowId: string;
}

/**
 * Mints each rental's token, accepted for `ttlDays` from the rent; refuses a token longer than
 * `maxChars` (what is left of Vast's env entry after `TEMPORAL_API_KEY=`), which no host could be given.
 */
export function hostTokenMinter(
  key: string,
  ttlDays: number,
  maxChars: number,
  nowMs: () => number = Date.now,
): (r: Rental) => string {
  return (r) => {
    const token = mintHostToken(key, { ...r, expiresAtSec: Math.floor(nowMs() / 1000 + ttlDays * 86_400) });
    if (token.length > maxChars) {
      throw new Error(
        `the host token for ${r.label} would be ${token.length} characters, over the ${maxChars} a host's env ` +
          `entry has room for (namespace ${r.namespace}, workflow id ${r.workflowId}: shorter ones fit)`,
      );
    }
    return token;
  };
}
