import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { countsAgainstMachine, markFor, shouldMarkBad } from '../../workflows/domain/policy/bad-machine-rule.js';
import { ALL_FAILURE_TYPES, FailureType } from '../../workflows/domain/failures.js';
import { withDefaults } from '../../workflows/domain/policy/defaults.js';
import {
  FAILURE_VERDICTS,
  KILL_MARK_SEC,
  markDecision,
  TRANSIENT_MARK_SEC,
  verdictFor,
} from '../../workflows/domain/policy/verdicts.js';

describe('the verdict table', () => {
  it('maps every failure type to exactly one verdict, and nothing else', () => {
    expect(Object.keys(FAILURE_VERDICTS).sort()).toEqual([...ALL_FAILURE_TYPES].sort());
    for (const t of ALL_FAILURE_TYPES) expect(['kill', 'inconclusive']).toContain(verdictFor(t).verdict);
  });

  it('kills, and marks at once, only where the host itself is at fault', () => {
    const kills = ALL_FAILURE_TYPES.filter((t) => verdictFor(t).verdict === 'kill').sort();
    expect(kills).toEqual(
      [
        'BenchRateBelowMin',
        'BenchmarkTimeout',
        'DaemonCrashed',
        'DaemonOOM',
        'HostMisreported',
        'HostPayloadTooLarge',
        'HostUnfit',
        'ImplausibleResult',
        'ProofDeadlineExceeded',
        'ProofFailed',
        'RateDegraded',
      ].sort(),
    );
    for (const t of kills) expect(verdictFor(t)).toMatchObject({ cause: 'host', marks: 'at-once', retry: false });
    // Only the rate kills are judged against the keep/kill bar.
    expect(kills.filter((t) => verdictFor(t).onBar)).toEqual(['BenchRateBelowMin', 'RateDegraded']);
  });

  it('calls ours, the network’s, the market’s and transients inconclusive: never marked on their own', () => {
    for (const t of ALL_FAILURE_TYPES.filter((x) => verdictFor(x).verdict === 'inconclusive')) {
      expect(verdictFor(t).cause).not.toBe('host');
      expect(markDecision(t, 1)).toEqual({ mark: false, expiresInSec: null });
    }
  });

  it('retries only what a fresh rental of the same offer could cure', () => {
    const retried = ALL_FAILURE_TYPES.filter((t) => verdictFor(t).retry);
    expect(retried).toContain(FailureType.DaemonTransportError);
    expect(retried).toContain(FailureType.HostLost);
    for (const t of [
      FailureType.CancelledByOperator,
      FailureType.OfferUnavailable,
      FailureType.Internal,
      FailureType.DestroyFailed,
      FailureType.BenchRateBelowMin,
    ]) {
      expect(retried).not.toContain(t);
    }
  });
});

describe('the bad-machine rule reads the table', () => {
  it('marks a kill at once, never for good: a week (a benchmark timeout 3 days), doubling per repeat to 90 days', () => {
    for (const t of ['DaemonOOM', 'DaemonCrashed', 'ProofFailed', 'BenchRateBelowMin', 'RateDegraded']) {
      expect(markFor(t, 1)).toEqual({ mark: true, expiresInSec: KILL_MARK_SEC });
    }
    expect(KILL_MARK_SEC).toBe(7 * 86_400);
    expect(markFor('BenchmarkTimeout', 1)).toEqual({ mark: true, expiresInSec: 3 * 86_400 });
    expect(markFor('DaemonOOM', 2)).toEqual({ mark: true, expiresInSec: 14 * 86_400 });
    expect(markFor('DaemonOOM', 9)).toEqual({ mark: true, expiresInSec: 90 * 86_400 });
    for (const t of ALL_FAILURE_TYPES) {
      for (const n of [1, 2, 5, 50])
        expect(markDecision(t, n).mark ? markDecision(t, n).expiresInSec : 1).not.toBeNull();
    }
  });

  it('does not count a kill judged on an operator’s per-deploy bar (deploy --min-rate) against the machine', () => {
    for (const t of ['BenchRateBelowMin', 'RateDegraded']) {
      expect(markFor(t, 1, undefined, { operatorBar: true })).toEqual({ mark: false, expiresInSec: null });
      expect(countsAgainstMachine(t, { operatorBar: true })).toBe(false);
      expect(countsAgainstMachine(t)).toBe(true);
    }
    // The bar says nothing about a daemon that ran out of memory: that still marks.
    expect(markFor('DaemonOOM', 1, undefined, { operatorBar: true }).mark).toBe(true);
  });

  it('ends a host the fitness gate could not read inconclusive: unmarked once, marked for a while on a repeat', () => {
    expect(verdictFor(FailureType.HostUnreadable)).toEqual({
      verdict: 'inconclusive',
      cause: 'ours',
      marks: 'repeated',
      retry: true,
    });
    expect(markFor('HostUnreadable', 1)).toEqual({ mark: false, expiresInSec: null });
    expect(markFor('HostUnreadable', 2)).toEqual({ mark: true, expiresInSec: TRANSIENT_MARK_SEC });
  });

  it('ends an unobserved benchmark inconclusive, ours, never counted, the offer tried again', () => {
    expect(verdictFor(FailureType.BenchmarkUnobserved)).toEqual({
      verdict: 'inconclusive',
      cause: 'ours',
      marks: 'never',
      retry: true,
    });
    expect(countsAgainstMachine('BenchmarkUnobserved')).toBe(false);
  });

  it('marks a repeated transient cause with an expiry that doubles per strike', () => {
    expect(shouldMarkBad('DaemonTransportError', 1)).toBe(false);
    expect(markFor('DaemonTransportError', 2)).toEqual({ mark: true, expiresInSec: TRANSIENT_MARK_SEC });
    expect(markFor('HostLost', 3)).toEqual({ mark: true, expiresInSec: 2 * TRANSIENT_MARK_SEC });
    expect(markFor('HostLost', 2, 60)).toEqual({ mark: true, expiresInSec: 60 });
    expect(markFor('HostLost', 40)?.expiresInSec).toBe(30 * 24 * 3600);
  });

  it('never counts ours, the market’s or an unknown type', () => {
    for (const t of [
      'OfferUnavailable',
      'VastApiError',
      'CancelledByOperator',
      'Internal',
      'PriceAboveBudget',
      'PricedOut',
      'Nope',
    ]) {
      expect(countsAgainstMachine(t)).toBe(false);
      expect(shouldMarkBad(t, 10)).toBe(false);
    }
  });
});

describe('docs/operating.md', () => {
  it('states each failure type’s verdict as the table does', () => {
    const doc = readFileSync(new URL('../../docs/operating.md', import.meta.url), 'utf8');
    for (const t of ALL_FAILURE_TYPES) {
      const row = doc.split('\n').find((l) => l.startsWith(`| \`${t}\``));
      expect(row, `failure table row for ${t}`).toBeDefined();
      const cells = row!.split('|').map((c) => c.trim());
      expect(cells[2], `verdict of ${t}`).toBe(verdictFor(t).verdict);
    }
  });
});

describe('verdict policy input', () => {
  it('defaults to early promote at 95 % and a 24 h transient mark, and refuses what it has no bound for', () => {
    expect(withDefaults({ offerId: 1 }).verdicts).toEqual({
      earlyPromote: true,
      confidence: 0.95,
      transientMarkSec: 86_400,
    });
    expect(() => withDefaults({ offerId: 1, verdicts: { confidence: 0.5 as 0.95 } })).toThrow(
      /confidence must be 0.9, 0.95 or 0.99/,
    );
    expect(() => withDefaults({ offerId: 1, verdicts: { transientMarkSec: 0 } })).toThrow(
      /transientMarkSec must be > 0/,
    );
  });
});
