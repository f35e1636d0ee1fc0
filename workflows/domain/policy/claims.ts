import table from './plausibility-bounds.json' with { type: 'json' };
import type { ProofTiming } from '../types.js';

/** The plausibility table (plausibility-bounds.json): the fewest seconds per proof a GPU model can take. */
export interface PlausibilityBounds {
  models: Record<string, { minProofSec: number }>;
  unknownModelMinProofSec: number;
  uniformity: { minProofs: number; minRelativeSpread: number };
}

export const PLAUSIBILITY_BOUNDS: PlausibilityBounds = checkBounds(table);

/** Why a host's claim cannot be true: the lifecycle's evidence for an ImplausibleResult. */
export type ImplausibleEvidence =
  | {
      check: 'rate-above-ceiling';
      /** Proofs per hour the host claims (benchmark or production window). */
      rate: number;
      /** Real proofs per hour its GPUs could do at best: numGpus x 3600 / minProofSec. */
      ceilingRate: number;
      gpuName: string;
      gpus: number;
      minProofSec: number;
    }
  | {
      check: 'uniform-timings';
      proofs: number;
      /** (slowest - fastest) / median of the proofs' total times. */
      relativeSpread: number;
      minRelativeSpread: number;
      medianMs: number;
    };

export interface HostClaim {
  gpuName: string;
  gpus: number;
  /** Real proofs per hour (the lifecycle converts what its hosts measure with its Clock). */
  rate: number;
  /** The benchmark's proofs, in real time; empty for a production window. */
  timings: readonly ProofTiming[];
}

/** Real proofs per hour `gpus` GPUs of `gpuName` cannot exceed. */
export function ceilingRate(gpuName: string, gpus: number, b = PLAUSIBILITY_BOUNDS): number {
  return (Math.max(1, gpus) * 3600) / minProofSec(gpuName, b);
}

export function minProofSec(gpuName: string, b = PLAUSIBILITY_BOUNDS): number {
  return b.models[gpuName.trim()]?.minProofSec ?? b.unknownModelMinProofSec;
}

/** The first reason the claim cannot be true, or null when it is plausible. */
export function implausibleEvidence(c: HostClaim, b = PLAUSIBILITY_BOUNDS): ImplausibleEvidence | null {
  const ceiling = ceilingRate(c.gpuName, c.gpus, b);
  if (c.rate > ceiling) {
    return {
      check: 'rate-above-ceiling',
      rate: c.rate,
      ceilingRate: Math.round(ceiling * 10) / 10,
      gpuName: c.gpuName,
      gpus: c.gpus,
      minProofSec: minProofSec(c.gpuName, b),
    };
  }
  const totals = c.timings.map((t) => t.totalMs).sort((x, y) => x - y);
  const lo = totals[0];
  const hi = totals[totals.length - 1];
  const median = totals[Math.floor(totals.length / 2)];
  if (totals.length < b.uniformity.minProofs || lo === undefined || hi === undefined || median === undefined) {
    return null;
  }
  const relativeSpread = median > 0 ? (hi - lo) / median : 0;
  if (relativeSpread >= b.uniformity.minRelativeSpread) return null;
  return {
    check: 'uniform-timings',
    proofs: totals.length,
    relativeSpread,
    minRelativeSpread: b.uniformity.minRelativeSpread,
    medianMs: median,
  };
}

/** One line an operator reads in the failure: what was claimed and why it is impossible. */
export function describeImplausible(e: ImplausibleEvidence): string {
  if (e.check === 'rate-above-ceiling') {
    return (
      `claimed ${e.rate} proofs/h, above the ${e.ceilingRate} proofs/h that ${e.gpus}x ${e.gpuName} can do ` +
      `(at least ${e.minProofSec} s per proof per GPU)`
    );
  }
  const pct = Math.round(e.relativeSpread * 100_000) / 1000;
  return (
    `${e.proofs} proofs took the same time to within ${pct} % (median ${e.medianMs} ms): ` +
    `real proofs spread at least ${e.minRelativeSpread * 100} %`
  );
}

/** The table is data: refuse a malformed one at load rather than judge hosts with it. */
export function checkBounds(raw: unknown): PlausibilityBounds {
  const bad = (why: string): never => {
    throw new TypeError(`plausibility-bounds.json: ${why}`);
  };
  const positive = (v: unknown, name: string): number =>
    typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : bad(`${name} must be a positive number`);
  if (typeof raw !== 'object' || raw === null) return bad('not an object');
  const r = raw as Record<string, unknown>;
  const modelsRaw = r.models;
  if (typeof modelsRaw !== 'object' || modelsRaw === null) return bad('models must be an object');
  const models: PlausibilityBounds['models'] = {};
  for (const [name, row] of Object.entries(modelsRaw)) {
    const sec = (row as Record<string, unknown> | null)?.minProofSec;
    models[name] = { minProofSec: positive(sec, `models["${name}"].minProofSec`) };
  }
  const u = r.uniformity as Record<string, unknown> | undefined;
  const minProofs = positive(u?.minProofs, 'uniformity.minProofs');
  if (!Number.isInteger(minProofs) || minProofs < 2) bad('uniformity.minProofs must be an integer >= 2');
  const spread = positive(u?.minRelativeSpread, 'uniformity.minRelativeSpread');
  if (spread >= 1) bad('uniformity.minRelativeSpread must be under 1');
  return {
    models,
    unknownModelMinProofSec: positive(r.unknownModelMinProofSec, 'unknownModelMinProofSec'),
    uniformity: { minProofs, minRelativeSpread: spread },
  };
}
