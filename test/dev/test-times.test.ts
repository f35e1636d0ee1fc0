import { describe, expect, it } from 'vitest';
import { failures, fileTimes, table } from '../../infra/dev/test-times.js';

describe("CI's per-file time table", () => {
  const report = {
    numTotalTests: 3,
    numPassedTests: 2,
    numFailedTests: 1,
    numPendingTests: 0,
    success: false,
    startTime: 1_000,
    testResults: [
      { name: '/repo/test/a.test.ts', status: 'passed', startTime: 1_000, endTime: 3_500, message: '' },
      { name: '/repo/test/b.test.ts', status: 'failed', startTime: 1_000, endTime: 61_000, message: '' },
    ],
  };

  it('gives each file its tier and seconds, relative to the checkout', () => {
    expect(fileTimes('e2e', report, '/repo')).toEqual([
      { file: 'test/a.test.ts', tier: 'e2e', seconds: 2.5, status: 'passed' },
      { file: 'test/b.test.ts', tier: 'e2e', seconds: 60, status: 'failed' },
    ]);
  });

  it('lists the slowest file first, across tiers', () => {
    const rows = [
      ...fileTimes('e2e', report, '/repo'),
      { file: 'test/c.test.ts', tier: 'fast', seconds: 30, status: 'passed' },
    ];
    const lines = table(rows).split('\n');
    expect(lines[0]).toMatch(/^file\s+tier\s+seconds\s+status$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual([
      'test/b.test.ts',
      'test/c.test.ts',
      'test/a.test.ts',
    ]);
    expect(lines[1]).toMatch(/test\/b\.test\.ts\s+e2e\s+60\.0\s+failed/);
  });
});

describe("CI's failure lines", () => {
  const base = { numTotalTests: 1, numPassedTests: 0, numFailedTests: 0, numPendingTests: 1, startTime: 0 };

  it('names a file that failed as a whole, with its message on one line', () => {
    const report = {
      ...base,
      success: false,
      testResults: [
        { name: '/repo/test/a.test.ts', status: 'failed', startTime: 0, endTime: 1, message: 'beforeAll\n  timed out' },
        { name: '/repo/test/b.test.ts', status: 'passed', startTime: 0, endTime: 1, message: '' },
      ],
    };
    expect(failures('e2e', report, '/repo')).toEqual(['e2e: FAILED test/a.test.ts — beforeAll timed out']);
  });

  it('says so when a tier failed with no failed file', () => {
    const report = { ...base, success: false, testResults: [] };
    expect(failures('e2e', report, '/repo')).toEqual([
      'e2e: failed with every test passed or skipped: an error outside the tests (see its log)',
    ]);
  });

  it('says nothing of a tier that passed', () => {
    expect(failures('fast', { ...base, success: true, testResults: [] }, '/repo')).toEqual([]);
  });
});
