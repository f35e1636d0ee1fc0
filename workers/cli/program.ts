import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { CONTROL_TASK_QUEUE } from '../../workflows/domain/task-queues.js';
import { registerFleet } from './commands/fleet.js';
import { registerHistory } from './commands/history.js';
import { registerLifecycle } from './commands/lifecycle.js';
import { registerMachines } from './commands/machines.js';
import { registerReport } from './commands/report.js';
import { registerSchedule } from './commands/schedule.js';
import { registerViews } from './commands/views.js';
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

/** `gpu-fleet`: the operator's CLI. Every command acts through Temporal (start, signal, cancel, schedules). */
export function buildProgram(ctx: CliContext): Command {
  const program = new Command('gpu-fleet')
    .description('gpu-fleet operator CLI: every command acts through Temporal (workflows, signals, schedules)')
    .version(packageVersion(), '-V, --version', 'print the version')
    .addHelpText('after', ENVIRONMENT);
  registerFleet(program, ctx);
  registerLifecycle(program, ctx);
  registerMachines(program, ctx);
  registerReport(program, ctx);
  registerSchedule(program, ctx);
  registerHistory(program, ctx);
  registerViews(program, ctx);
  configure(program);
  return program;
}
