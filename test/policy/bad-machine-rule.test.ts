import { describe, expect, it } from 'vitest';
import { countsAgainstMachine, shouldMarkBad } from '../../activities/store/bad-machine-rule.js';

describe('bad-machine rule', () => {
  it('marks a machine bad at once for failures that mean the machine is unfit', () => {
    for (const t of ['DaemonOOM', 'DaemonCrashed', 'ProofFailed', 'BenchRateBelowMin', 'BenchmarkTimeout']) {
      expect(shouldMarkBad(t, 1)).toBe(true);
    }
  });
  it('waits for a second transient failure', () => {
    expect(shouldMarkBad('DaemonTransportError', 1)).toBe(false);
    expect(shouldMarkBad('DaemonTransportError', 2)).toBe(true);
    expect(shouldMarkBad('HostLost', 2)).toBe(true);
  });
  it('never blames a machine for our or the market’s failures', () => {
    for (const t of ['OfferUnavailable', 'VastApiError', 'CancelledByOperator', 'Internal']) {
      expect(countsAgainstMachine(t)).toBe(false);
      expect(shouldMarkBad(t, 10)).toBe(false);
    }
  });
});
