import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';

/**
 * Argument parsers for commander. Each takes the text exactly as typed and refuses anything it would
 * otherwise have to reinterpret ('' as 0, 1e3 as 1000, 1e999 as Infinity, ids past 2^53, 046714145 as
 * 46714145), naming the field and the range it accepts. A pattern and a range, no schema library: every
 * CLI run parses its arguments, and loading zod costs a read ~70 ms (docs/cli.md, "Latency").
 */
const WHOLE = /^(0|[1-9][0-9]*)$/;
const DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;
const LEADING_ZERO = /^0[0-9]/;
const zeros = (text: string) => (LEADING_ZERO.test(text) ? ' (no leading zeros: was another id meant?)' : '');

export function wholeNumber(field: string, min: number, max = Number.MAX_SAFE_INTEGER, unit = '') {
  const range = `a whole number from ${min} to ${max}${unit ? ` ${unit}` : ''}`;
  return (text: string): number => {
    const n = WHOLE.test(text) ? Number(text) : NaN;
    if (!(Number.isSafeInteger(n) && n >= min && n <= max))
      throw new InvalidArgumentError(`${field} must be ${range}, got '${text}'${zeros(text)}`);
    return n;
  };
}

export function decimalNumber(field: string, min: number, max: number, unit: string, exclusiveMin = false) {
  const range = exclusiveMin
    ? `a number above ${min}, at most ${max} ${unit}`
    : `a number from ${min} to ${max} ${unit}`;
  return (text: string): number => {
    const n = DECIMAL.test(text) ? Number(text) : NaN;
    if (!(Number.isFinite(n) && n <= max && (exclusiveMin ? n > min : n >= min)))
      throw new InvalidArgumentError(`${field} must be ${range} (plain decimal), got '${text}'${zeros(text)}`);
    return n;
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

/**
 * A file the CLI will write: its directory must exist and be writable, and the path must not be a
 * directory or a file we cannot write. Checked before anything is fetched, so nothing is lost to it.
 */
export function writableFile(field: string) {
  return (text: string): string => {
    const dir = path.dirname(path.resolve(text));
    const refuse = (why: string) => new InvalidArgumentError(`${field} '${text}' cannot be written: ${why}`);
    const dirStat = statSync(dir, { throwIfNoEntry: false });
    if (!dirStat?.isDirectory()) throw refuse(`no directory ${dir}`);
    const fileStat = statSync(text, { throwIfNoEntry: false });
    if (fileStat?.isDirectory()) throw refuse('it is a directory');
    try {
      accessSync(fileStat ? text : dir, constants.W_OK);
    } catch {
      throw refuse(fileStat ? 'the file is not writable' : `the directory ${dir} is not writable`);
    }
    return text;
  };
}

/** Options that may be given more than once, each adding to a list. */
const REPEATABLE: ReadonlySet<unknown> = new Set([collect]);

/**
 * A single-value option given twice (`--min-rate 29 --min-rate 2900`) is refused, exit 2: commander
 * would let the last one win silently, and the operator may have meant either.
 */
export function refuseRepeatedOptions(cmd: Command): void {
  const seen = new Set<string>();
  for (const opt of cmd.options) {
    const takesValue = opt.required || opt.optional;
    if (!takesValue || opt.variadic || REPEATABLE.has(opt.parseArg)) continue;
    const name = opt.name();
    cmd.on(`option:${name}`, () => {
      if (seen.has(name)) {
        cmd.error(`error: option '${opt.flags}' given more than once; give it once`, {
          exitCode: 2,
          code: 'gpu-fleet.repeatedOption',
        });
      }
      seen.add(name);
    });
  }
}

const SPAN_UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * A span back from now in ms, written as `report --since` writes one (90m, 24h, 7d): a whole number of
 * minutes, hours or days, at least 1.
 */
export function spanArg(field: string) {
  return (text: string): number => {
    const m = /^([1-9][0-9]{0,5})([mhd])$/.exec(text);
    if (!m) throw new InvalidArgumentError(`${field} must be a span back from now (30m, 2h, 1d), got '${text}'`);
    return Number(m[1]) * SPAN_UNIT_MS[m[2] as keyof typeof SPAN_UNIT_MS];
  };
}
