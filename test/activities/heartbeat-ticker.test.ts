import { describe, expect, it } from 'vitest';
import { tickerIntervalMs } from '../../activities/gpu-host/heartbeat-ticker.js';

describe('host step heartbeat ticker', () => {
  it('ticks every 5 s under the production 60 s heartbeat timeout', () => {
    expect(tickerIntervalMs(60_000)).toBe(5000);
  });
  it('ticks faster for short heartbeat timeouts, never under 1 s', () => {
    expect(tickerIntervalMs(24_000)).toBe(2000);
    expect(tickerIntervalMs(3_000)).toBe(1000);
  });
  it('falls back to 5 s when the step has no heartbeat timeout', () => {
    expect(tickerIntervalMs(undefined)).toBe(5000);
    expect(tickerIntervalMs(0)).toBe(5000);
  });
});
