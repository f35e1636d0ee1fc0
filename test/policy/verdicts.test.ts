import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { countsAgainstMachine, markFor, shouldMarkBad } from '../../workflows/domain/policy/bad-machine-rule.js';
import { ALL_FAILURE_TYPES, FailureType } from '../../workflows/domain/failures.js';
import { withDefaults } from '../../workflows/domain/policy/defaults.js';
import {
  FAILURE_VERDICTS,
  markDecision,
  TRANSIENT_MARK_SEC,
  verdictFor,
} from '../../workflows/domain/policy/verdicts.js';

describe('the verdict table', () => {
  it('maps every failure type to exactly one verdict, and nothing else', () => {
    expect(Object.keys(FAILURE_VERDICTS).sort()).toEqual([...ALL_FAILURE_TYPES].sort());
    for (const t of ALL_FAILURE_TYPES) expect(['kill', 'inconclusive']).toContain(verdictFor(t).verdict);
  });

  it('kills, and marks for good, only where the host itself is at fault', () => {
    const kills = ALL_FAILURE_TYPES.filter((t) => verdictFor(t).verdict === 'kill').sort();
    expect(kills).toEqual(
      [
        'BenchRateBelowMin',
        'BenchmarkTimeout',
        'DaemonCrashed',
        'DaemonOOM',
        'HostUnfit',
        'ImplausibleResult',
        'ProofDeadlineExceeded',
        'ProofFailed',
        'RateDegraded',
      ].sort(),
    );
    for (const t of kills) expect(verdictFor(t)).toMatchObject({ cause: 'host', marks: 'at-once', retry: false });
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
  it('marks a kill at once with no expiry', () => {
    for (const t of ['DaemonOOM', 'DaemonCrashed', 'ProofFailed', 'BenchRateBelowMin', 'BenchmarkTimeout']) {
      expect(markFor(t, 1)).toEqual({ mark: true, expiresInSec: null });
    }
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
