import { describe, expect, it } from 'vitest';
import { HOST_TOKEN_RETIRE_MARGIN_SEC, hostTokenRetireAtMs } from '../../workflows/domain/policy/host-token-expiry.js';

describe('when a watched host is retired before its token expires', () => {
  const expiresAt = '2027-03-05T10:00:00.000Z';

  it('the margin and two watch intervals before the expiry', () => {
    expect(hostTokenRetireAtMs(expiresAt, 300)).toBe(
      Date.parse(expiresAt) - (HOST_TOKEN_RETIRE_MARGIN_SEC + 600) * 1000,
    );
    // A slower watch retires earlier: its next sample may come one interval too late.
    expect(hostTokenRetireAtMs(expiresAt, 3600)!).toBeLessThan(hostTokenRetireAtMs(expiresAt, 300)!);
  });

  it('never for a rental without a token, or an expiry that is no date', () => {
    expect(hostTokenRetireAtMs(undefined, 300)).toBeNull();
    expect(hostTokenRetireAtMs('soon', 300)).toBeNull();
  });
});
