import { type Command, InvalidArgumentError, Option } from 'commander';
import { CliError } from './context.js';

/**
 * `-o json|wide|name` beside `--json` on the read commands, as operators type it for kubectl-like tools:
 * text (the default), json (the same as --json), wide (the table with more columns) and name (the ids,
 * one per line, for a pipe into the next command).
 */
export type OutputFormat = 'text' | 'json' | 'wide' | 'name';

export interface OutputOpts {
  json?: boolean;
  output?: OutputFormat;
}

export interface Views {
  text: () => string;
  /** More columns; a command without it does not offer `-o wide`. */
  wide?: () => string;
  /** The ids the output is about, one per line. */
  names: () => string[];
}

/** Adds --json and -o; `wide` only where the command has a wider table. `what` names the ids `-o name` prints. */
export function addOutputFlags(cmd: Command, what: string, wide: boolean): Command {
  const formats: OutputFormat[] = wide ? ['text', 'json', 'wide', 'name'] : ['text', 'json', 'name'];
  const help = `text, json${wide ? ', wide (more columns)' : ''} or name (${what}, one per line)`;
  // Two formats are refused before the command fetches anything.
  cmd.hook('preAction', (_program, action) => void formatOf(action.opts<OutputOpts>()));
  return cmd.option('--json', 'print as JSON (the same as -o json)').addOption(
    new Option('-o, --output <format>', help).argParser((text: string) => {
      if ((formats as string[]).includes(text)) return text as OutputFormat;
      throw new InvalidArgumentError(`-o must be one of ${formats.join(', ')}, got '${text}'`);
    }),
  );
}

/** The one format asked for; --json with another -o is a contradiction, refused (exit 2 by the entry point). */
export function formatOf(opts: OutputOpts): OutputFormat {
  if (opts.json && opts.output && opts.output !== 'json')
    throw new CliError(`--json and -o ${opts.output} ask for two formats; give one`, 2);
  return opts.json ? 'json' : (opts.output ?? 'text');
}

/** Prints `data` in the format asked for. */
export function emit(opts: OutputOpts, data: unknown, views: Views): void {
  const format = formatOf(opts);
  if (format === 'json') console.log(JSON.stringify(data, null, 2));
  else if (format === 'name') {
    const names = views.names();
    if (names.length > 0) console.log(names.join('\n'));
  } else if (format === 'wide' && views.wide) console.log(views.wide());
  else console.log(views.text());
}
