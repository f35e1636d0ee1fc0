import { log } from '@temporalio/activity';
import { readHostToken } from './host-token.js';
import type { RentedInstance } from '../../workflows/domain/types.js';
import type { Instance } from './schemas.js';

/** The env entry the rent puts a host's per-rental token in (workers/setup/config.ts). */
const TOKEN_ENV = 'TEMPORAL_API_KEY';

type Expiry = Pick<RentedInstance, 'hostTokenExpiresAt'>;

/**
 * The expiry of the token a rental's host was given, for the watch to retire it in time: only the
 * expiry leaves the activity, never the token. Nothing when the rental has no per-rental token.
 */
export function tokenExpiry(token: string | undefined): Expiry {
  const claims = token === undefined ? null : readHostToken(token);
  return claims ? { hostTokenExpiresAt: new Date(claims.expiresAtSec * 1000).toISOString() } : {};
}

/**
 * The same for an instance adopted by its label (a retried or uncertain create): the token it was
 * created with, read back from `extra_env` (Vast shows an instance's env there, as [key, value] pairs).
 */
export function carriedTokenExpiry(inst: Instance, minting: boolean): Expiry {
  const env: unknown = inst.extra_env;
  const pair = Array.isArray(env)
    ? env.find((e): e is [string, string] => Array.isArray(e) && e[0] === TOKEN_ENV && typeof e[1] === 'string')
    : undefined;
  const expiry = tokenExpiry(pair?.[1]);
  if (minting && expiry.hostTokenExpiresAt === undefined) {
    // The watch cannot retire it before its token lapses; it would end HostLost then.
    log.warn(`instance ${inst.id} was adopted by its label but Vast shows no host token in its env: expiry unknown`);
  }
  return expiry;
}
