import { describe, expect, it } from 'vitest';
import { killedTodayByType, listUrl, savedViews } from '../../workers/cli/views.js';
import { promoteRefusal } from '../../workflows/promote-override.js';
import { REAL_TIME } from '../../workflows/domain/policy/clock.js';
import type { LifecycleStatus } from '../../workflows/domain/types.js';
import { currentDetails, type DetailsState } from '../../workflows/ui/current-details.js';
import { grpcCodeName } from '../../workflows/ui/grpc-codes.js';
import {
  earlyStopCause,
  type KillFacts,
  killDetails,
  killMessage,
  timingLine,
} from '../../workflows/ui/kill-report.js';
import { hostSummary, storeSummary } from '../../workflows/ui/summaries.js';

const facts = (over: Partial<KillFacts> = {}): KillFacts => ({
  type: 'DaemonCrashed',
  cause: 'cuzk-daemon died during benchmark (signal SIGKILL)',
  stage: 'benchmark',
  details: { diagnostics: { grpcCode: 14 } },
  diagnostics: { grpcCode: 14, grpcMessage: 'Connection dropped', daemonLogTail: 'a\nb\n\nc\n' },
  costUsd: 4.1,
  dph: 0.5,
  rentedForMs: 8 * 3_600_000 + 12 * 60_000,
  minRate: 29,
  concurrency: 3,
  ...over,
});

describe('the UI texts', () => {
  it('says type, cause and cost once, the stage only where the cause does not name it', () => {
    expect(killMessage(facts())).toBe(
      'DaemonCrashed: cuzk-daemon died during benchmark (signal SIGKILL) · cost $4.10 ($0.500/h for 8 h 12 min)',
    );
    expect(
      killMessage(
        facts({ type: 'BenchRateBelowMin', cause: '12 proofs/h is below the minimum of 29', stage: 'evaluating' }),
      ),
    ).toBe(
      'BenchRateBelowMin during evaluating: 12 proofs/h is below the minimum of 29 · cost $4.10 ($0.500/h for 8 h 12 min)',
    );
    expect(killMessage(facts({ costUsd: null, dph: null, rentedForMs: null }))).toContain(
      'nothing billed (never rented)',
    );
  });

  it('leads the details with a human summary: gRPC status by name, last log lines; raw evidence after', () => {
    const d = killDetails(facts());
    expect(Object.keys(d).slice(0, 4)).toEqual(['summary', 'stage', 'costUsd', 'grpcStatus']);
    expect(d.grpcStatus).toBe('UNAVAILABLE (14)');
    expect(String(d.summary)).toContain('gRPC UNAVAILABLE (14): Connection dropped');
    expect(String(d.summary)).toContain('last daemon log lines:\na\nb\nc');
    expect(d.diagnostics).toEqual({ grpcCode: 14 });
    expect(grpcCodeName(4)).toBe('DEADLINE_EXCEEDED (4)');
    expect(grpcCodeName(99)).toBe('gRPC code 99');
  });

  it('puts per-proof timings against the pace minRate needs at the batch concurrency', () => {
    const t = [500_000, 480_000, 520_000].map((totalMs, index) => ({
      index,
      totalMs,
      synthesisMs: 0,
      gpuComputeMs: 0,
    }));
    // 29 proofs/h with 3 in flight: each proof may take 3 h / 29 = 372 s, about 6 min.
    expect(timingLine(t, 29, 3)).toBe(
      '3 proof(s) took 8 min / 8 min / 9 min (min / median / max); 29 proofs/h at 3 in flight needs ≤ 6 min each',
    );
  });

  it('phrases an early stop as one sentence', () => {
    expect(earlyStopCause({ completed: 1, requested: 4, gpus: 1, gpuCeilingRate: 16, minRate: 29 })).toBe(
      'stopped early after 1 of 4 proofs: 1 GPU cannot exceed 16 proofs/h, under the minimum of 29 proofs/h',
    );
  });

  it('keeps current details short and current, with dollar signs escaped for the markdown', () => {
    const base: DetailsState = {
      stage: 'benchmark',
      benchmark: { completed: 7, requested: 12, elapsedMs: 3_600_000 * (7 / 41) },
      stageDeadlineMs: 23 * 60_000,
      rate: null,
      rateWindowMs: null,
      costUsd: 0,
      waiting: null,
      vastUnreadableSince: null,
    };
    expect(currentDetails(base, 0)).toBe(
      'benchmark 7 of 12 proofs · 41 proofs/h so far · 23 min left · \\$0.00 so far',
    );
    const promoted = {
      ...base,
      stage: 'promoted' as const,
      rate: 39,
      rateWindowMs: 30 * 60_000,
      stageDeadlineMs: null,
      costUsd: 4.1,
    };
    expect(currentDetails(promoted, 8.2 * 3_600_000)).toBe('promoted · 39 proofs/h over 30 min · \\$4.10 so far');
    // A re-rent of an offer says which rental it is, so a list of one offer's lifecycles tells them apart.
    expect(currentDetails({ ...promoted, rentalNumber: 3 }, 8.2 * 3_600_000)).toBe(
      'rental 3 of this offer · promoted · 39 proofs/h over 30 min · \\$4.10 so far',
    );
    expect(currentDetails({ ...promoted, rentalNumber: 1 }, 8.2 * 3_600_000)).not.toContain('rental');
  });

  it('names stage changes and host steps', () => {
    expect(storeSummary('recordEvent', [{ stage: 'benchmark', message: 'entered benchmark' }])).toBe(
      'stage → benchmark',
    );
    expect(hostSummary('2x A40')('runBenchmark', [{ count: 12, concurrency: 3 }])).toBe(
      'benchmark 12 proofs ×3 on 2x A40',
    );
  });
});

describe('the promote override validator', () => {
  const status = (over: Partial<LifecycleStatus>): LifecycleStatus => ({
    stage: 'benchmark',
    offerId: 1,
    rentalKey: 'k',
    rentalNumber: 1,
    instanceId: 2,
    gpuName: 'A40',
    benchmark: null,
    rate: null,
    startedAt: '',
    stageDeadline: null,
    failureType: null,
    cause: null,
    clock: REAL_TIME,
    ...over,
  });
  const o = { operator: 'ops', reason: 'known good' };
  it('accepts before the verdict and names the verdict after it', () => {
    expect(promoteRefusal(status({}), o)).toBeNull();
    expect(promoteRefusal(status({ stage: 'evaluating' }), o)).toBeNull();
    expect(promoteRefusal(status({ stage: 'killing', failureType: 'BenchRateBelowMin' }), o)).toBe(
      'verdict already given: killed BenchRateBelowMin',
    );
    expect(promoteRefusal(status({ stage: 'promoted', rate: 41 }), o)).toBe(
      'verdict already given: promoted at 41 proofs/h',
    );
  });
});

describe('saved views', () => {
  const now = new Date('2026-12-05T13:00:00Z');
  it('filter to lifecycles, count running promoted runs only, and start today at midnight UTC', () => {
    const v = Object.fromEntries(savedViews(now, '38877').map((x) => [x.name, x.query]));
    for (const q of Object.values(v).filter((q) => !q.includes(' IN (')))
      expect(q).toContain('WorkflowType = "instanceLifecycle"');
    expect(v['promoted-fleet']).toContain('ExecutionStatus = "Running"');
    expect(v['killed-today']).toContain('CloseTime >= "2026-12-05T00:00:00Z"');
    expect(v['machine-38877']).toContain('MachineId = "38877"');
    expect(killedTodayByType(now).map((x) => x.name)).toContain('killed-today-BenchRateBelowMin');
    expect(listUrl('http://ui:8233/', 'default', 'a = "b"')).toBe(
      'http://ui:8233/namespaces/default/workflows?query=a%20%3D%20%22b%22',
    );
  });
});
