import { describe, expect, it } from 'vitest';
import { mapLimit } from '../../infra/dev/map-limit.js';
import { pollUntil, waitUntil } from '../../infra/dev/poll.js';

describe('mapLimit', () => {
  it('keeps input order and never runs more than the limit at once', async () => {
    let running = 0;
    let peak = 0;
    const out = await mapLimit([30, 10, 20, 5, 15], 2, async (ms, i) => {
      peak = Math.max(peak, ++running);
      await new Promise((r) => setTimeout(r, ms));
      running--;
      return `${i}:${ms}`;
    });
    expect(out).toEqual(['0:30', '1:10', '2:20', '3:5', '4:15']);
    expect(peak).toBe(2);
  });

  it('refuses a limit below 1 instead of never starting', async () => {
    await expect(mapLimit([1], 0, async (x) => x)).rejects.toThrow('limit must be >= 1');
  });
});

describe('pollUntil', () => {
  it('retries errors until a value comes, and names what it waited for on timeout', async () => {
    let n = 0;
    const v = await pollUntil(
      'the third try',
      () => {
        if (++n < 3) throw new Error('not yet');
        return n;
      },
      { timeoutMs: 2000, intervalMs: 1 },
    );
    expect(v).toBe(3);
    await expect(
      pollUntil('never', () => Promise.reject(new Error('down')), { timeoutMs: 20, intervalMs: 5 }),
    ).rejects.toThrow('timed out after 20 ms waiting for never (last error: down)');
  });

  it('waitUntil fails at once on an error', async () => {
    let calls = 0;
    await expect(
      waitUntil(
        'a condition',
        () => {
          calls++;
          throw new Error('broken');
        },
        { timeoutMs: 5000, intervalMs: 1 },
      ),
    ).rejects.toThrow('broken');
    expect(calls).toBe(1);
  });
});
