import { type Command, InvalidArgumentError } from 'commander';
import type { OfferFilter } from '../../workflows/fleet-scaler.js';

type Flag = 'verified' | 'external' | 'rentable';
const FLAGS: readonly Flag[] = ['verified', 'external', 'rentable'];
const DEFAULTS: Record<Flag, string> = { verified: 'true', external: 'false', rentable: 'true' };

function flagValue(name: Flag) {
  return (text: string): boolean | null => {
    if (text === 'true' || text === 'false') return text === 'true';
    if (text === 'any') return null;
    throw new InvalidArgumentError(`--${name} must be true, false or any, got '${text}'`);
  };
}

/**
 * Vast's default search filters (vast-cli seeds verified=true, external=false, rentable=true), each
 * overridable; `any` drops the filter, as vast-cli's `any` does.
 */
export function addSearchFlags(cmd: Command): Command {
  for (const name of FLAGS) {
    cmd.option(
      `--${name} <true|false|any>`,
      `Vast's ${name} filter (default ${DEFAULTS[name]}, vast-cli's default; any drops it)`,
      flagValue(name),
    );
  }
  return cmd;
}

/** Only the flags the operator gave: the rest keep the workflow's defaults. */
export function searchFlagsOf(opts: Partial<Record<Flag, boolean | null>>): Pick<OfferFilter, Flag> {
  const out: Pick<OfferFilter, Flag> = {};
  for (const name of FLAGS) if (opts[name] !== undefined) out[name] = opts[name];
  return out;
}
