import { type Command, InvalidArgumentError } from 'commander';
import { DEFAULT_OFFER_FILTER, type OfferFilter } from '../../workflows/domain/policy/offer-filter.js';

type Flag = 'verified' | 'external' | 'rentable';
const FLAGS: readonly Flag[] = ['verified', 'external', 'rentable'];
const DEFAULTS: Record<Flag, string> = { verified: 'true', external: 'false', rentable: 'true' };

// commander stores a parser's null as '' (its "no value"), so `any` is kept as text until searchFlagsOf.
type FlagValue = boolean | 'any';

/** The search flags as commander hands them to an action. */
export type SearchFlagOpts = Partial<Record<Flag, FlagValue>>;

function flagValue(name: Flag) {
  return (text: string): FlagValue => {
    if (text === 'true' || text === 'false') return text === 'true';
    if (text === 'any') return 'any';
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
function searchFlagsOf(opts: SearchFlagOpts): Pick<OfferFilter, Flag> {
  const out: Pick<OfferFilter, Flag> = {};
  for (const name of FLAGS) {
    const v = opts[name];
    if (v !== undefined) out[name] = v === 'any' ? null : v;
  }
  return out;
}

/** The search both `offers` and `schedule setup` send: the one default filter, with the operator's flags. */
export function offerFilterOf(opts: { gpu?: string[] } & SearchFlagOpts): OfferFilter {
  return {
    ...DEFAULT_OFFER_FILTER,
    gpuModels: opts.gpu ?? [...DEFAULT_OFFER_FILTER.gpuModels],
    ...searchFlagsOf(opts),
  };
}
