import { isFailureType } from '../../../workflows/domain/failures.js';
import { countsAgainstMachine, markFor } from '../../../workflows/domain/policy/bad-machine-rule.js';
import type { Standing } from '../../../workflows/domain/policy/early-promote-plan.js';
import type { OpenRentalRow } from '../../../workflows/domain/policy/fleet-figures.js';
import type { PerfSample } from '../../../workflows/domain/policy/predictions.js';
import { FAILURE_VERDICTS, type Verdict } from '../../../workflows/domain/policy/verdicts.js';

/** A rental as the store keeps it (the `instances` table), times in seconds into the day. */
export interface StoreRow extends OpenRentalRow {
  rentalKey: string;
  offerId: number;
  machineId: number;
  /** The offer's hardware (the instances row's gpu_name, num_gpus, cpu_ram_mb). */
  gpuName: string;
  numGpus: number;
  cpuRamMb: number;
  failureType: string | null;
  verdict: Verdict | null;
  destroyed: boolean;
  updatedAtSec: number;
}

/**
 * The store's state the policy reads, in memory: rentals, the last benchmark per machine (host_perf),
 * failure counts and marks with their expiry. What each query returns restates the SQL in
 * activities/store/queries.ts (the SQL is not importable as a function); every rule it applies — the
 * verdict table, the bad-machine rule, the marks' expiry — is the product's own, imported.
 */
export class EvalStore {
  readonly rows = new Map<string, StoreRow>();
  private readonly perf = new Map<number, { gpuName: string; numGpus: number; cpuRamMb: number; lastRate: number }>();
  private readonly failures = new Map<string, number>();
  /** Machine -> when its mark expires (seconds into the day), null for a mark that stands. */
  private readonly marks = new Map<number, number | null>();

  open(row: Omit<StoreRow, 'outcome' | 'failureType' | 'verdict' | 'destroyed' | 'benchRate'>): void {
    this.rows.set(row.rentalKey, {
      ...row,
      outcome: null,
      failureType: null,
      verdict: null,
      destroyed: false,
      benchRate: null,
    });
  }

  /** rentedRows: not destroyed, promoted or without a verdict. */
  rented(): StoreRow[] {
    return [...this.rows.values()].filter((r) => !r.destroyed && (r.outcome === null || r.outcome === 'promoted'));
  }

  /** upsertBenchmark: the rental's bench rate and the machine's last rate. */
  benchmarked(key: string, rate: number, atSec: number): void {
    const r = this.rows.get(key)!;
    r.benchRate = rate;
    r.updatedAtSec = atSec;
    this.perf.set(r.machineId, { gpuName: r.gpuName, numGpus: r.numGpus, cpuRamMb: r.cpuRamMb, lastRate: rate });
  }

  /** Each machine's last benchmark with the hardware it ran on: what the predictions learn from. */
  perfSamples(): PerfSample[] {
    return [...this.perf].map(([machineId, p]) => ({
      machineId,
      gpuName: p.gpuName,
      numGpus: p.numGpus,
      cpuRamMb: p.cpuRamMb,
      rate: p.lastRate,
    }));
  }

  /** listBadMachineIds: marked and the mark not expired. */
  badMachines(nowSec: number): number[] {
    return [...this.marks].filter(([, exp]) => exp === null || exp > nowSec).map(([id]) => id);
  }

  /** machineStanding: bad while marked, on probation once an expiring mark has run out. */
  standing(machineId: number, nowSec: number): Standing {
    if (!this.marks.has(machineId)) return 'good';
    const exp = this.marks.get(machineId)!;
    return exp === null || exp > nowSec ? 'bad' : 'probation';
  }

  /** restingMachines: inconclusive more than `retries` times of a retry type in the window, or once of another. */
  resting(nowSec: number, windowSec: number, retries: number): number[] {
    const counts = new Map<number, { retry: number; other: number }>();
    for (const r of this.rows.values()) {
      if (r.verdict !== 'inconclusive' || r.updatedAtSec <= nowSec - windowSec) continue;
      const c = counts.get(r.machineId) ?? { retry: 0, other: 0 };
      const retry = r.failureType !== null && isFailureType(r.failureType) && FAILURE_VERDICTS[r.failureType].retry;
      if (retry) c.retry++;
      else c.other++;
      counts.set(r.machineId, c);
    }
    return [...counts].filter(([, c]) => c.retry > retries || c.other > 0).map(([id]) => id);
  }

  /** recordOutcome: the verdict once (a promoted rental may be killed later), then the bad-machine rule. */
  finish(key: string, failureType: string | null, atSec: number, transientMarkSec: number): void {
    const r = this.rows.get(key)!;
    if (r.outcome !== null && !(r.outcome === 'promoted' && failureType !== null)) return;
    r.outcome = failureType === null ? 'promoted' : 'killed';
    r.failureType = failureType;
    r.verdict =
      failureType === null ? 'promote' : isFailureType(failureType) ? FAILURE_VERDICTS[failureType].verdict : 'kill';
    r.updatedAtSec = atSec;
    if (failureType === null) return this.passProbation(r.machineId, atSec);
    if (!countsAgainstMachine(failureType)) return;
    const k = `${r.machineId}/${failureType}`;
    const count = (this.failures.get(k) ?? 0) + 1;
    this.failures.set(k, count);
    const d = markFor(failureType, count, transientMarkSec);
    if (!d.mark) return;
    const current = this.marks.get(r.machineId);
    const next = d.expiresInSec === null ? null : atSec + d.expiresInSec;
    // A mark is never shortened by a later one: one that stands stays, the later expiry wins (markBad).
    if (this.marks.has(r.machineId) && (current === null || (next !== null && current !== undefined && current > next)))
      return;
    this.marks.set(r.machineId, next);
  }

  destroyed(key: string): void {
    this.rows.get(key)!.destroyed = true;
  }

  private passProbation(machineId: number, nowSec: number): void {
    const exp = this.marks.get(machineId);
    if (exp === undefined || exp === null || exp > nowSec) return;
    this.marks.delete(machineId);
    for (const k of [...this.failures.keys()]) if (k.startsWith(`${machineId}/`)) this.failures.delete(k);
  }
}
