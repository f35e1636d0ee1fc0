import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { CONTROL_TASK_QUEUE } from '../../workflows/domain/task-queues.js';
import { refuseRepeatedOptions } from './args.js';
import { type CliContext, DEFAULT_ADDRESS } from './context.js';

/**
 * The package's version, from its package.json: two levels up from workers/cli/ in the checkout, three
 * from dist/workers/cli/ in a build.
 */
export function packageVersion(): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'gpu-fleet' && pkg.version) return pkg.version;
    } catch {
      // not at this level: try the next
    }
  }
  return 'unknown';
}

const ENVIRONMENT = `
environment:
  TEMPORAL_ADDRESS    server (default ${DEFAULT_ADDRESS})
  TEMPORAL_NAMESPACE  namespace (default "default")
  TEMPORAL_UI_URL     web UI base, for links (default http://127.0.0.1:8233 with the default address)
  CONTROL_TASK_QUEUE  control worker queue (default "${CONTROL_TASK_QUEUE}")
  USER                recorded as the operator
  DATABASE_URL        the control worker's Postgres, read by machines list, report and logs
Run "gpu-fleet <command> --help" for a command's options.`;

function fullName(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * A command group typed bare (`gpu-fleet machines`) prints its help and exits 0, as `--help` does; a word
 * it does not know is still a usage error.
 */
function bareGroupPrintsHelp(group: Command): void {
  group.allowExcessArguments(true).action((_opts: unknown, self: Command) => {
    const [word] = self.args;
    if (word === undefined) return void self.outputHelp();
    self.error(`error: unknown command '${word}' for '${fullName(self)}'`, {
      exitCode: 2,
      code: 'commander.unknownCommand',
    });
  });
}

/** Usage errors exit 2 and show the one command's usage; help exits 0. Applied to every subcommand. */
function configure(cmd: Command): void {
  cmd
    .exitOverride()
    .showHelpAfterError(`usage: ${fullName(cmd)} ${cmd.usage()}\n(run "${fullName(cmd)} --help" for details)`);
  cmd.configureOutput({ outputError: (text, write) => write(text) });
  refuseRepeatedOptions(cmd);
  if (cmd.commands.length > 0) bareGroupPrintsHelp(cmd);
  for (const sub of cmd.commands) configure(sub);
}

type Register = (program: Command, ctx: CliContext) => void;

/**
 * The command modules, loaded on demand: a run loads only the module of the command it was given (each
 * pulls in its own share of the Temporal SDK and the workflow definitions), help and usage errors all.
 */
const MODULES: Array<{ commands: string[]; load: () => Promise<Register> }> = [
  { commands: ['fleet', 'offers'], load: async () => (await import('./commands/fleet.js')).registerFleet },
  { commands: ['deploy'], load: async () => (await import('./commands/deploy.js')).registerDeploy },
  {
    commands: ['status', 'kill', 'promote', 'logs'],
    load: async () => (await import('./commands/lifecycle.js')).registerLifecycle,
  },
  { commands: ['machines'], load: async () => (await import('./commands/machines.js')).registerMachines },
  { commands: ['report'], load: async () => (await import('./commands/report.js')).registerReport },
  { commands: ['schedule'], load: async () => (await import('./commands/schedule.js')).registerSchedule },
  { commands: ['history'], load: async () => (await import('./commands/history.js')).registerHistory },
  { commands: ['views'], load: async () => (await import('./commands/views.js')).registerViews },
];

/**
 * `gpu-fleet`: the operator's CLI. Every action goes through Temporal (start, signal, cancel, schedules);
 * reads come from queries, visibility or the store.
 * `args` (after node and the script) picks the one module to load; without a known command first, all.
 */
export async function buildProgram(ctx: CliContext, args: readonly string[] = []): Promise<Command> {
  const program = new Command('gpu-fleet')
    .description(
      'gpu-fleet operator CLI: every action goes through Temporal (workflows, signals, schedules); reads run no workflow',
    )
    .version(packageVersion(), '-V, --version', 'print the version')
    .addHelpText('after', ENVIRONMENT);
  const first = args[0];
  const one = MODULES.find((m) => first !== undefined && m.commands.includes(first));
  for (const register of await Promise.all((one ? [one] : MODULES).map((m) => m.load()))) register(program, ctx);
  configure(program);
  return program;
}
