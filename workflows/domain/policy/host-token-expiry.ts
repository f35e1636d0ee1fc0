/**
 * A promoted host's per-rental token is accepted until its expiry (HOST_TOKEN_TTL_DAYS from the rent).
 * Past it the host can no longer poll its queue, its next step times out and the lifecycle would end
 * `HostLost`, counted against a healthy machine. So the watch retires the host first: at least this long
 * before the expiry, plus two watch intervals (the sample that sees it may come one interval late).
 */
export const HOST_TOKEN_RETIRE_MARGIN_SEC = 3600;

/** Wall-clock ms at which a watched host is retired; null when it has no token (no expiry to keep). */
export function hostTokenRetireAtMs(expiresAt: string | undefined, watchIntervalSec: number): number | null {
  if (expiresAt === undefined) return null;
  const at = Date.parse(expiresAt);
  if (Number.isNaN(at)) return null;
  return at - (HOST_TOKEN_RETIRE_MARGIN_SEC + 2 * watchIntervalSec) * 1000;
}
