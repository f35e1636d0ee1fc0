import { CommanderError } from 'commander';
import { CliContext, CliError } from './cli/context.js';
import { buildProgram } from './cli/program.js';
import { sdk } from './cli/sdk.js';

const ctx = new CliContext();
const program = await buildProgram(ctx, process.argv.slice(2));

async function main(): Promise<number> {
  try {
    await program.parseAsync(process.argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
      // Everything else is a usage error (a bare command group prints its help instead: program.ts).
      return 2;
    }
    if (err instanceof sdk.WorkflowNotFoundError) {
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
