import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { InvalidArgumentError } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CliContext } from '../../workers/cli/context.js';
import { buildProgram } from '../../workers/cli/program.js';
import { spanArg } from '../../workers/cli/args.js';
import { endedStage, fleetStatus, fleetTotals } from '../../workers/cli/fleet.js';
import { SA } from '../../workflows/domain/search-attributes.js';

/**
 * `fleet status --ended <span>`: the lifecycles closed within the span beside the running ones, each at
 * the cost its ledger closed at (not counted on to now), read in one visibility query; the running ones
 * alone make the $/h figures. Against a stub visibility list; one subprocess proves a bad span exits 2.
 */
const NOW = Date.UTC(2026, 11, 6, 9, 0);
const at = (min: number) => new Date(NOW + min * 60_000);

function execution(
  workflowId: string,
  status: string,
  start: Date,
  close: Date | undefined,
  sa: TypedSearchAttributes,
) {
  return {
    workflowId,
    status: { name: status },
    startTime: start,
    closeTime: close,
    typedSearchAttributes: sa,
    memo: {},
  };
}

const running = execution(
  'instance-offer-1',
  'RUNNING',
  at(-120),
  undefined,
  new TypedSearchAttributes([
    { key: SA.stage, value: 'promoted' },
    { key: SA.benchRate, value: 40 },
    { key: SA.dollarsPerHour, value: 0.5 },
    { key: SA.costUsd, value: 0.75 },
    { key: SA.costCountedAt, value: at(-30) },
  ]),
);
// Killed 20 min ago after 40 min rented: its CostUsd was counted at the destroy, and stays so.
const killed = execution(
  'instance-offer-2',
  'FAILED',
  at(-60),
  at(-20),
  new TypedSearchAttributes([
    { key: SA.stage, value: 'killed' },
    { key: SA.outcome, value: 'killed' },
    { key: SA.failureType, value: 'BenchRateBelowMin' },
    { key: SA.dollarsPerHour, value: 0.6 },
    { key: SA.costUsd, value: 0.4 },
    { key: SA.costCountedAt, value: at(-20) },
  ]),
);

function stubClient(queries: string[]): Client {
  return {
    workflow: {
      list: ({ query }: { query: string }) => {
        queries.push(query);
        const rows = query.includes('"Running"') ? [running] : query.includes('CloseTime') ? [killed] : [];
        return (async function* () {
          yield* rows;
        })();
      },
    },
  } as unknown as Client;
}

afterEach(() => vi.restoreAllMocks());

/** The real program on the stub visibility, its stdout captured. */
async function cliText(args: string[]): Promise<string> {
  const ctx = new CliContext();
  vi.spyOn(ctx, 'temporal').mockResolvedValue(stubClient([]));
  const out: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.map(String).join(' ')));
  await (await buildProgram(ctx, args)).parseAsync(['node', 'gpu-fleet', ...args]);
  return out.join('\n');
}

describe('fleet status --ended', () => {
  it('reads spans as report --since does and refuses anything else', () => {
    const ended = spanArg('--ended');
    expect([ended('30m'), ended('2h'), ended('1d')]).toEqual([1_800_000, 7_200_000, 86_400_000]);
    for (const bad of ['0m', '2', '1w', '1.5h', '', '-1h', '01h'])
      expect(() => ended(bad), bad).toThrow(
        new InvalidArgumentError(`--ended must be a span back from now (30m, 2h, 1d), got '${bad}'`),
      );
  });

  it('lists the ended lifecycles in one query, at their closed cost, with their verdict as the stage', async () => {
    const queries: string[] = [];
    const rows = await fleetStatus(stubClient(queries), { now: NOW, endedSinceMs: NOW - 3_600_000 });
    expect(queries).toHaveLength(3); // running, ended, and the runs of both in one batch
    expect(queries[1]).toBe(
      'WorkflowType = "instanceLifecycle" AND ExecutionStatus IN ("Completed", "Failed", "Canceled", "Terminated", "TimedOut") AND CloseTime > "2026-12-06T08:00:00.000Z"',
    );
    expect(queries[2]).toBe('WorkflowId IN ("instance-offer-1", "instance-offer-2")');
    expect(rows.map((r) => [r.workflowId, r.stage, r.costUsd, r.ageSec, r.endedAt])).toEqual([
      ['instance-offer-1', 'promoted', 1, 7200, null], // 0.75 counted on 30 min at $0.50/h
      ['instance-offer-2', 'killed BenchRateBelowMin', 0.4, 2400, at(-20).toISOString()],
    ]);
    const totals = fleetTotals(rows, at(-60).toISOString());
    expect(totals).toMatchObject({
      lifecycles: 1,
      byStage: { promoted: 1 },
      dollarsPerHour: 0.5,
      dollarsPerProof: 0.5 / 40,
      costUsd: 1.4,
      ended: { lifecycles: 1, byStage: { 'killed BenchRateBelowMin': 1 }, costUsd: 0.4 },
    });
  });

  it('without --ended reads only the running ones, as before', async () => {
    const queries: string[] = [];
    const rows = await fleetStatus(stubClient(queries), { now: NOW });
    expect(queries.some((q) => q.includes('CloseTime'))).toBe(false);
    expect(fleetTotals(rows)).toMatchObject({ lifecycles: 1, costUsd: 1, ended: null });
  });

  it("names an ended lifecycle's stage by its verdict, and by how it closed when that says more", () => {
    expect(endedStage('killed', 'HostLost', 'FAILED')).toBe('killed HostLost');
    expect(endedStage('promoted', undefined, 'TERMINATED')).toBe('promoted, terminated');
    expect(endedStage(undefined, undefined, 'TIMED_OUT')).toBe('timed out');
  });

  it('labels each total by the rows it covers; -o name lists the ended ids too', async () => {
    const text = await cliText(['fleet', 'status', '--ended', '1h']);
    expect(text).toMatch(/lifecycles\s+1 running \(1 promoted\)/);
    expect(text).toMatch(/billing\s+\$0\.500\/h \(every running lifecycle\)/);
    expect(text).toMatch(/ended\s+1 since .* \(1 killed BenchRateBelowMin\)/);
    expect(text).toMatch(/cost to date, ended\s+\$0\.40 GPU-\$/);
    expect(text).toMatch(/cost to date, listed\s+\$[\d.,]+ GPU-\$ \(running and ended\)/);
    expect(await cliText(['fleet', 'status', '--ended', '1h', '-o', 'name'])).toBe(
      'instance-offer-1\ninstance-offer-2',
    );
  });

  it('exits 2 on a bad span before it connects anywhere', async () => {
    const r = await promisify(execFile)(process.execPath, ['bin/gpu-fleet.mjs', 'fleet', 'status', '--ended', '1w'], {
      env: { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1' },
    }).then(
      () => ({ code: 0, err: '' }),
      (e: { code: number; stderr: string }) => ({ code: e.code, err: e.stderr }),
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain("--ended must be a span back from now (30m, 2h, 1d), got '1w'");
  }, 60_000);
});
