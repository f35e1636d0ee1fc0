import { describe, expect, it } from 'vitest';
import { DEFAULT_WATCH } from '../../workflows/domain/policy/defaults.js';
import { watchLimits } from '../../workflows/domain/policy/watch-limits.js';

const watch = { ...DEFAULT_WATCH, floorRate: null, maxDph: null };

describe('watchLimits: what a promoted host is held to', () => {
  it('defaults to 80 % of minRate and 20 % over the billed price', () => {
    expect(watchLimits({ minRate: 29, watch }, 0.5)).toEqual({ floor: 23.2, maxDph: 0.6 });
  });

  it("takes the lifecycle's own floor and ceiling over the defaults", () => {
    expect(watchLimits({ minRate: 29, watch: { ...watch, floorRate: 10, maxDph: 2 } }, 0.5)).toEqual({
      floor: 10,
      maxDph: 2,
    });
  });

  it('holds an interruptible rental to its bid ceiling, not to 20 % over its bid', () => {
    expect(watchLimits({ minRate: 29, watch }, 0.3, 1.25).maxDph).toBe(1.25);
  });
});
