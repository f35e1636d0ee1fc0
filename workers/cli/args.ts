import { InvalidArgumentError } from 'commander';
import { z } from 'zod';

/**
 * Argument parsers for commander. Each takes the text exactly as typed and refuses anything it would
 * otherwise have to reinterpret ('' as 0, 1e3 as 1000, 1e999 as Infinity, ids past 2^53), naming the
 * field and the range it accepts.
 */
const WHOLE = /^[0-9]+$/;
const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;

export function wholeNumber(field: string, min: number, max = Number.MAX_SAFE_INTEGER, unit = '') {
  const range = `a whole number from ${min} to ${max}${unit ? ` ${unit}` : ''}`;
  const schema = z.string().regex(WHOLE).transform(Number).pipe(z.number().int().min(min).max(max));
  return (text: string): number => {
    const r = schema.safeParse(text);
    if (!r.success) throw new InvalidArgumentError(`${field} must be ${range}, got '${text}'`);
    return r.data;
  };
}

export function decimalNumber(field: string, min: number, max: number, unit: string, exclusiveMin = false) {
  const range = exclusiveMin
    ? `a number above ${min}, at most ${max} ${unit}`
    : `a number from ${min} to ${max} ${unit}`;
  const schema = z
    .string()
    .regex(DECIMAL)
    .transform(Number)
    .pipe(
      z
        .number()
        .finite()
        .max(max)
        .refine((n) => (exclusiveMin ? n > min : n >= min)),
    );
  return (text: string): number => {
    const r = schema.safeParse(text);
    if (!r.success) throw new InvalidArgumentError(`${field} must be ${range} (plain decimal), got '${text}'`);
    return r.data;
  };
}

export function nonEmptyText(field: string, maxLength = 500) {
  return (text: string): string => {
    const t = text.trim();
    if (t.length === 0 || t.length > maxLength)
      throw new InvalidArgumentError(`${field} must be 1 to ${maxLength} characters of text, got '${text}'`);
    return t;
  };
}

/** Vast ids (offers, machines, instances): positive, and exact in a double and in an Int search attribute. */
export const offerIdArg = wholeNumber('offerId', 1);
export const machineIdArg = wholeNumber('machineId', 1);
/** A keep/kill bar: 0 would promote anything, so it must be above 0. */
export const minRateArg = decimalNumber('--min-rate', 0, 1_000_000, 'proofs/h', true);
export const reasonArg = nonEmptyText('--reason');

/** Several --gpu flags collect into one list. */
export function collect(value: string, previous: string[] | undefined): string[] {
  const v = nonEmptyText('--gpu', 100)(value);
  return [...(previous ?? []), v];
}
