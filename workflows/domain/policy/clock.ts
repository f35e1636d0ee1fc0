import type { BenchmarkReport } from '../types.js';

/**
 * How the lifecycle's clock (its timers and its hosts' clocks) runs against real time. In production it
 * is real time (scale 1). Against the simulators (demo, tests) it runs 1/scale faster (0.01: a 100 s
 * proof takes 1 s), so a rate measured on it is 1/scale too high and a duration 1/scale too short. The
 * lifecycle carries its Clock in its input and converts with it where a figure enters the workflow or a
 * message is made, so every rate, duration and cost it shows (status, search attributes, failures, store,
 * metrics) is real. Durations in the lifecycle's own input (timeouts, watch) are on this clock.
 */
export interface Clock {
  /** Clock seconds per real second, in (0, 1]. */
  scale: number;
}

export const REAL_TIME: Clock = { scale: 1 };

/** A clock that runs `scale` clock seconds per real second; throws outside (0, 1]. */
export function clockOf(scale: number): Clock {
  if (!(scale > 0 && scale <= 1))
    throw new RangeError(`the clock's scale must be in (0, 1] (1 = real time), got ${scale}`);
  return { scale };
}

/** Real milliseconds for a span measured on the clock. */
export function realMs(clockMs: number, clock: Clock): number {
  return clockMs / clock.scale;
}

/** Real whole seconds for a span on the clock (for messages). */
export function realSec(clockMs: number, clock: Clock): number {
  return Math.round(realMs(clockMs, clock) / 1000);
}

/** A span of `clockSec` seconds on the clock, said in real time ("33 min"): for messages. */
export function realDuration(clockSec: number, clock: Clock): string {
  return formatDuration(realMs(clockSec * 1000, clock) / 1000);
}

/** A real rate (proofs per real hour) in proofs per clock hour: what the host, on the clock, compares to. */
export function clockRate(realProofsPerHour: number, clock: Clock): number {
  return realProofsPerHour / clock.scale;
}

/** A rate measured on the clock (proofs per clock hour) in real proofs per hour. */
export function realRate(clockProofsPerHour: number, clock: Clock): number {
  return clockProofsPerHour * clock.scale;
}

/**
 * A benchmark report with every duration passed through `ms` and every rate through `rate`: the one list of
 * which fields of a report are durations and which are rates, for a conversion either way between clocks.
 */
export function mapReportUnits(
  report: BenchmarkReport,
  ms: (x: number) => number,
  rate: (x: number) => number,
): BenchmarkReport {
  const g = report.gaveUp;
  const p = report.promotedEarly;
  return {
    ...report,
    ...(g
      ? {
          gaveUp: {
            ...g,
            bestRate: rate(g.bestRate),
            gpuCeilingRate: g.gpuCeilingRate === null ? null : rate(g.gpuCeilingRate),
          },
        }
      : {}),
    ...(p
      ? {
          promotedEarly: {
            ...p,
            elapsedMs: ms(p.elapsedMs),
            proofBoundMs: ms(p.proofBoundMs),
            rateLowerBound: rate(p.rateLowerBound),
            projectedRate: rate(p.projectedRate),
            minRate: rate(p.minRate),
          },
        }
      : {}),
    elapsedMs: ms(report.elapsedMs),
    timings: report.timings.map((t) => ({
      ...t,
      totalMs: ms(t.totalMs),
      synthesisMs: ms(t.synthesisMs),
      gpuComputeMs: ms(t.gpuComputeMs),
    })),
  };
}

/** A host's benchmark report with its durations and its early-stop and early-promote evidence in real units. */
export function realReport(report: BenchmarkReport, clock: Clock): BenchmarkReport {
  if (clock.scale === 1) return report;
  return mapReportUnits(
    report,
    (x) => Math.round(realMs(x, clock)),
    (x) => Math.round(realRate(x, clock) * 100) / 100,
  );
}

/** A real duration in the largest unit that reads well: "45 s", "47 min", "3.2 h", "2.1 d". */
export function formatDuration(sec: number): string {
  if (sec < 120) return `${Math.round(sec)} s`;
  if (sec < 2 * 3600) return `${Math.round(sec / 60)} min`;
  if (sec < 48 * 3600) return `${Math.round(sec / 360) / 10} h`;
  return `${Math.round(sec / 8640) / 10} d`;
}
