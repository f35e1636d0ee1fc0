import { describe, expect, it } from 'vitest';
import {
  clockOf,
  clockRate,
  REAL_TIME,
  realDuration,
  realMs,
  realReport,
  realSec,
} from '../../workflows/domain/policy/clock.js';
import {
  costAt,
  formatCost,
  formatDuration,
  formatUsd,
  destroyed,
  openLedger,
  promoted,
  repriced,
} from '../../workflows/domain/policy/cost.js';
import { NotifyEventSchema, summary } from '../../activities/notify/event.js';
import { costToDate } from '../../workers/cli/fleet.js';
import { fmtUsd } from '../../workers/cli/format.js';

const T0 = Date.parse('2026-12-05T00:00:00Z');
const MIN = 60_000;
/** The simulators' clock in the demo: 100x. */
const FAST = clockOf(0.01);

describe('cost ledger (GPU-$ at the billed price, from workflow time)', () => {
  it('counts rent to now before the verdict, then production after it', () => {
    let l = openLedger(0.4, T0, REAL_TIME);
    expect(costAt(l, T0 + 30 * MIN)).toMatchObject({
      totalUsd: 0.2,
      beforeVerdictUsd: 0.2,
      productionUsd: 0,
      rentedSec: 1800,
    });
    l = promoted(l, T0 + 45 * MIN);
    const c = costAt(l, T0 + 105 * MIN);
    expect(c.beforeVerdictUsd).toBeCloseTo(0.3, 9);
    expect(c.productionUsd).toBeCloseTo(0.4, 9);
    expect(c.totalUsd).toBeCloseTo(0.7, 9);
    expect(c.rentedSec).toBe(105 * 60);
    expect(c.productionSec).toBe(60 * 60);
  });

  it('counts a compressed clock in real time: 36 s at 100x is an hour', () => {
    const l = openLedger(0.5, T0, FAST);
    const c = costAt(l, T0 + 36_000);
    expect(c.totalUsd).toBeCloseTo(0.5, 9);
    expect(c.rentedSec).toBe(3600);
  });

  it('keeps the old price for the time before a reprice', () => {
    let l = promoted(openLedger(1, T0, REAL_TIME), T0);
    l = repriced(l, 2, T0 + 60 * MIN);
    expect(costAt(l, T0 + 90 * MIN).productionUsd).toBeCloseTo(2, 9);
    expect(repriced(l, 2, T0 + 70 * MIN)).toBe(l);
  });

  it('survives JSON (continue-as-new) unchanged', () => {
    const l = promoted(openLedger(0.37, T0, FAST), T0 + 5000);
    const back = JSON.parse(JSON.stringify(l)) as typeof l;
    expect(costAt(back, T0 + 20_000)).toEqual(costAt(l, T0 + 20_000));
  });

  it('stops at the destroy: a later read gives the kill figure, however late', () => {
    const l = destroyed(promoted(openLedger(0.6, T0, REAL_TIME), T0 + 10 * MIN), T0 + 40 * MIN);
    const atKill = costAt(l, T0 + 40 * MIN);
    expect(atKill.totalUsd).toBeCloseTo(0.4, 9);
    expect(costAt(l, T0 + 300 * MIN)).toEqual(atKill);
    expect(costAt(JSON.parse(JSON.stringify(l)) as typeof l, T0 + 9999 * MIN)).toEqual(atKill);
    // A second destroy (a retried cleanup) does not move it.
    expect(destroyed(l, T0 + 90 * MIN)).toBe(l);
  });

  it('gives a list the same cost to date as the ledger: counted sum on at the billed price', () => {
    const l = repriced(openLedger(0.5, T0, FAST), 0.8, T0 + 18_000);
    const counted = costAt(l, T0 + 18_000).totalUsd;
    expect(costToDate(counted, new Date(T0 + 18_000), 0.8, FAST, T0 + 54_000)).toBeCloseTo(
      costAt(l, T0 + 54_000).totalUsd,
      9,
    );
    expect(costToDate(undefined, undefined, 0.8, FAST, T0)).toBeNull();
  });

  it('never counts time backwards', () => {
    const l = openLedger(1, T0, REAL_TIME);
    expect(costAt(l, T0 - MIN).totalUsd).toBe(0);
  });
});

describe('formatting with units', () => {
  it('says the kill clause as "after 47 min, $0.31"', () => {
    const c = costAt(openLedger(0.4, T0, REAL_TIME), T0 + 47 * MIN);
    expect(formatCost(c)).toBe('after 47 min, $0.31');
    expect(formatCost(null)).toBe('nothing rented, $0');
  });
  it('keeps small sums readable and durations in the largest unit', () => {
    expect(formatUsd(0.0123)).toBe('$0.0123');
    expect(formatUsd(12.345)).toBe('$12.35');
    expect(formatUsd(0.5653)).toBe('$0.57');
    // The CLI writes money with the same formatter.
    expect(fmtUsd(0.5653)).toBe(formatUsd(0.5653));
    expect(fmtUsd(0.0123)).toBe('$0.0123');
    expect(fmtUsd(null)).toBe('-');
    const kill = NotifyEventSchema.parse({
      kind: 'kill',
      workflowId: 'w',
      costUsd: 0.3712,
      reason: 'r',
      at: new Date(T0).toISOString(),
    });
    expect(summary(kill)).toContain('cost $0.37');
    expect(formatDuration(45)).toBe('45 s');
    expect(formatDuration(3 * 3600 + 720)).toBe('3.2 h');
    expect(formatDuration(3 * 86400)).toBe('3 d');
  });
});

describe('the clock conversion', () => {
  it('turns a host-clock report into real time and a real bar into the host clock', () => {
    expect(realMs(1000, FAST)).toBe(100_000);
    expect(realSec(27_000, FAST)).toBe(2700);
    // 29 real proofs/h is 2900 per compressed hour at 100x.
    expect(clockRate(29, FAST)).toBeCloseTo(2900, 9);
    const r = realReport(
      {
        requested: 2,
        completed: 2,
        elapsedMs: 2000,
        concurrency: 1,
        timings: [{ index: 0, totalMs: 1000, synthesisMs: 400, gpuComputeMs: 450 }],
        deadlineReached: false,
        gaveUp: {
          bound: 'gpu-ceiling',
          bestRate: 2000,
          gpuCeilingRate: 1600,
          gpus: 1,
          completed: 2,
          requested: 12,
        },
      },
      FAST,
    );
    expect(r.elapsedMs).toBe(200_000);
    // The host's early-stop evidence in real proofs/h: 1600 per compressed hour is 16 per real one.
    expect(r.gaveUp).toMatchObject({ bestRate: 20, gpuCeilingRate: 16 });
    expect(r.timings[0]).toEqual({ index: 0, totalMs: 100_000, synthesisMs: 40_000, gpuComputeMs: 45_000 });
  });
});

describe('durations in messages', () => {
  it('says a span on the clock in real time, where the message is made', () => {
    expect(realDuration(20, FAST)).toBe('33 min');
    expect(realDuration(27, FAST)).toBe('45 min');
    expect(realDuration(12, REAL_TIME)).toBe('12 s');
  });

  it('refuses a clock outside (0, 1]', () => {
    expect(() => clockOf(0)).toThrow(RangeError);
    expect(() => clockOf(2)).toThrow(RangeError);
    expect(clockOf(1)).toEqual(REAL_TIME);
  });
});
