/** Confidence levels the sequential tests accept; each has its exact Student-t quantiles below. */
export const CONFIDENCE_LEVELS = [0.9, 0.95, 0.99] as const;
export type Confidence = (typeof CONFIDENCE_LEVELS)[number];

/** One-sided Student-t quantiles t(p, df) for df = 1..30 (standard tables). */
const T_QUANTILES: Record<Confidence, readonly number[]> = {
  0.9: [
    3.078, 1.886, 1.638, 1.533, 1.476, 1.44, 1.415, 1.397, 1.383, 1.372, 1.363, 1.356, 1.35, 1.345, 1.341, 1.337, 1.333,
    1.33, 1.328, 1.325, 1.323, 1.321, 1.319, 1.318, 1.316, 1.315, 1.314, 1.313, 1.311, 1.31,
  ],
  0.95: [
    6.314, 2.92, 2.353, 2.132, 2.015, 1.943, 1.895, 1.86, 1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753, 1.746, 1.74,
    1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697,
  ],
  0.99: [
    31.821, 6.965, 4.541, 3.747, 3.365, 3.143, 2.998, 2.896, 2.821, 2.764, 2.718, 2.681, 2.65, 2.624, 2.602, 2.583,
    2.567, 2.552, 2.539, 2.528, 2.518, 2.508, 2.5, 2.492, 2.485, 2.479, 2.473, 2.467, 2.462, 2.457,
  ],
};

export function isConfidence(value: unknown): value is Confidence {
  return (CONFIDENCE_LEVELS as readonly unknown[]).includes(value);
}

/** t(p, df); past 30 degrees of freedom the df-30 value (a little wider than the true one, so on the safe side). */
export function studentT(confidence: Confidence, df: number): number {
  if (!Number.isInteger(df) || df < 1) throw new RangeError(`degrees of freedom must be a positive integer, got ${df}`);
  const row = T_QUANTILES[confidence];
  return row[Math.min(df, row.length) - 1] ?? row[row.length - 1]!;
}
