import { describe, expect, it } from 'vitest';
import { clockOf, REAL_TIME } from '../../workflows/domain/policy/clock.js';
import { unheardDeadline } from '../../workflows/domain/policy/deadline-evidence.js';

const T0 = 1_000_000;
const facts = (over: Partial<Parameters<typeof unheardDeadline>[0]> = {}) => ({
  dueAtMs: T0,
  firedAtMs: T0 + 200,
  unheardSinceMs: null,
  heartbeatSec: 60,
  deadlineSec: 45 * 60,
  clock: REAL_TIME,
  ...over,
});

describe('a deadline is evidence only if we were listening', () => {
  it('is heard when the timer fires on time and the host’s batch reaches the server', () => {
    expect(unheardDeadline(facts())).toBeNull();
    // Within a heartbeat timeout of its due time: a busy worker, not an outage.
    expect(unheardDeadline(facts({ firedAtMs: T0 + 59_000 }))).toBeNull();
  });

  it('is not heard when the timer fired late: the host gets back the time we missed', () => {
    // The deadline fell 120 s into a 180 s server outage: the timer fires when the server returns.
    const u = unheardDeadline(facts({ firedAtMs: T0 + 60_000 + 120_000 }));
    expect(u).toMatchObject({ lateSec: 180, unheardSec: null, extendSec: 240 });
    expect(u?.why).toMatch(/fired 3 min late/);
  });

  it('says what it missed in real time when the clock is compressed', () => {
    const clock = clockOf(0.01);
    // The same outage on a clock 100x fast: 1.8 s of workflow time late is 3 real minutes.
    const u = unheardDeadline(facts({ clock, heartbeatSec: 0.6, deadlineSec: 27, firedAtMs: T0 + 1800 }));
    expect(u?.lateSec).toBeCloseTo(1.8, 5);
    expect(u?.why).toMatch(/fired 3 min late/);
  });

  it('is not heard when the host’s batch had gone unheard at the server, whatever the ratio of lengths', () => {
    for (const scale of [0.01, 1, 10]) {
      const hb = 60 * scale;
      const u = unheardDeadline(
        facts({ heartbeatSec: hb, deadlineSec: 2700 * scale, unheardSinceMs: T0 - 30_000 * scale, firedAtMs: T0 }),
      );
      expect(u?.unheardSec).toBeCloseTo(30 * scale, 1);
      // At least four heartbeat timeouts: the server times the lost attempt out, the workflow calls again.
      expect(u?.extendSec).toBeCloseTo(4 * hb, 1);
    }
  });

  it('never listens for more than a second deadline', () => {
    const u = unheardDeadline(facts({ deadlineSec: 300, firedAtMs: T0 + 3_600_000 }));
    expect(u?.extendSec).toBe(300);
  });
});
