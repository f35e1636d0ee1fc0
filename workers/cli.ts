import { WorkflowNotFoundError } from '@temporalio/client';
import { Command, CommanderError } from 'commander';
import { CONTROL_TASK_QUEUE } from '../workflows/domain/task-queues.js';
import { registerFleet } from './cli/commands/fleet.js';
import { registerHistory } from './cli/commands/history.js';
import { registerLifecycle } from './cli/commands/lifecycle.js';
import { registerMachines } from './cli/commands/machines.js';
import { registerReport } from './cli/commands/report.js';
import { registerSchedule } from './cli/commands/schedule.js';
import { registerViews } from './cli/commands/views.js';
import { refuseRepeatedOptions } from './cli/args.js';
import { CliContext, CliError, DEFAULT_ADDRESS } from './cli/context.js';

/** `gpu-fleet`: the operator's CLI. Every command acts through Temporal (start, signal, cancel, schedules). */
const ctx = new CliContext();
const program = new Command('gpu-fleet')
  .description('gpu-fleet operator CLI: every command acts through Temporal (workflows, signals, schedules)')
  .addHelpText(
    'after',
    `
environment:
  TEMPORAL_ADDRESS    server (default ${DEFAULT_ADDRESS})
  TEMPORAL_NAMESPACE  namespace (default "default")
  TEMPORAL_UI_URL     web UI base, for links (default http://127.0.0.1:8233 with the default address)
  CONTROL_TASK_QUEUE  control worker queue (default "${CONTROL_TASK_QUEUE}")
  USER                recorded as the operator
Run "gpu-fleet <command> --help" for a command's options.`,
  );

registerFleet(program, ctx);
registerLifecycle(program, ctx);
registerMachines(program, ctx);
registerReport(program, ctx);
registerSchedule(program, ctx);
registerHistory(program, ctx);
registerViews(program, ctx);

/** Usage errors exit 2 and show the one command's usage; help exits 0. Applied to every subcommand. */
function configure(cmd: Command): void {
  cmd
    .exitOverride()
    .showHelpAfterError(`usage: ${fullName(cmd)} ${cmd.usage()}\n(run "${fullName(cmd)} --help" for details)`);
  cmd.configureOutput({ outputError: (text, write) => write(text) });
  refuseRepeatedOptions(cmd);
  for (const sub of cmd.commands) configure(sub);
}
function fullName(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}
configure(program);

async function main(): Promise<number> {
  try {
    await program.parseAsync(process.argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
      // Everything else is a usage error, a bare command group (`gpu-fleet machines`) included.
      return 2;
    }
    if (err instanceof WorkflowNotFoundError) {
      console.error(
        `error: no workflow '${err.workflowId}' in namespace ${ctx.namespace} (check the id: gpu-fleet fleet status)`,
      );
      return 1;
    }
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    return err instanceof CliError ? err.exitCode : 1;
  } finally {
    await ctx.close();
  }
}

process.exitCode = await main();
