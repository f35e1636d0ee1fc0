import type { BenchmarkReport } from '../types.js';

/**
 * The one conversion between the lifecycle's clock and real time. In production the scale is 1. Against
 * the simulators (demo, tests) time runs faster by 1/scale (SIM_TIME_SCALE=0.01: a 100 s proof takes 1 s),
 * so a rate measured on that clock is 1/scale too high and a duration 1/scale too short. The lifecycle
 * takes the scale as input and converts what it measures here, where it enters the workflow, so every
 * rate, duration and cost it shows (status, search attributes, failures, store, metrics) is real.
 */
export const REAL_TIME = 1;

/** Real milliseconds for a span measured on the workflow's (and host's) clock. */
export function realMs(clockMs: number, timeScale: number): number {
  return clockMs / timeScale;
}

/** Real whole seconds for a span on the clock (for messages). */
export function realSec(clockMs: number, timeScale: number): number {
  return Math.round(realMs(clockMs, timeScale) / 1000);
}

/** A real rate (proofs per real hour) in proofs per clock hour: what the host, on the fast clock, compares to. */
export function clockRate(realProofsPerHour: number, timeScale: number): number {
  return realProofsPerHour / timeScale;
}

/** A rate measured on the host's clock (proofs per clock hour) in real proofs per hour. */
export function realRate(clockProofsPerHour: number, timeScale: number): number {
  return clockProofsPerHour * timeScale;
}

/** A host's benchmark report with its durations and its early-stop and early-promote evidence in real units. */
export function realReport(report: BenchmarkReport, timeScale: number): BenchmarkReport {
  if (timeScale === REAL_TIME) return report;
  const ms = (x: number) => Math.round(realMs(x, timeScale));
  const rate = (x: number) => Math.round(realRate(x, timeScale) * 100) / 100;
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

/**
 * A failure message with its durations ("no progress for 20 s") in real time ("33 min"). Host steps and
 * the lifecycle write durations on their clock; every kill message passes here once, in the lifecycle.
 */
export function realDurationsInText(text: string, timeScale: number): string {
  if (timeScale === REAL_TIME) return text;
  return text.replace(/\b(\d+(?:\.\d+)?) s\b/g, (_, n: string) => formatDuration(Number(n) / timeScale));
}

/** A real duration in the largest unit that reads well: "45 s", "47 min", "3.2 h", "2.1 d". */
export function formatDuration(sec: number): string {
  if (sec < 120) return `${Math.round(sec)} s`;
  if (sec < 2 * 3600) return `${Math.round(sec / 60)} min`;
  if (sec < 48 * 3600) return `${Math.round(sec / 360) / 10} h`;
  return `${Math.round(sec / 8640) / 10} d`;
}
