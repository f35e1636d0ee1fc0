import type { Command } from 'commander';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { writableFile } from '../args.js';
import { type CliContext, CliError } from '../context.js';
import { exportHistory } from '../history.js';
import { checkComplete, loadHistory, replayHistory } from '../replay.js';

export function registerHistory(program: Command, ctx: CliContext): void {
  const history = program.command('history').description('workflow histories');
  history
    .command('export')
    .description("write a workflow's history as JSON (what the UI downloads and replay reads)")
    .argument('<workflowId>', 'the workflow id')
    .argument('<file>', 'where to write it (its directory must exist)', writableFile('<file>'))
    .action(async (workflowId: string, file: string) => {
      const n = await exportHistory(await ctx.temporal(), workflowId, file);
      console.log(`wrote ${n} events to ${file}`);
    });

  program
    .command('replay')
    .description('replay a history against the current workflow code; prints only the verdict')
    .argument('<source>', 'a workflow id, or a history .json file')
    .option('--partial', "accept a file that ends before the workflow closed (a running workflow's export)")
    .action(async (source: string, opts: { partial?: boolean }) => {
      const { history: h, workflowId, running } = await loadHistory(source, () => ctx.temporal());
      checkComplete(h, { running: running || Boolean(opts.partial) });
      // The SDK's worker logs its start and bundling at INFO; only the verdict is for the operator.
      Runtime.install({ logger: new DefaultLogger('ERROR'), shutdownSignals: [] });
      const verdict = await replayHistory(h, workflowId);
      if (verdict.ok) {
        console.log(
          `replay of ${workflowId}: OK, the current workflow code reproduces its ${h.events?.length ?? 0} events`,
        );
        return;
      }
      throw new CliError(
        verdict.determinism
          ? `replay of ${workflowId}: NON-DETERMINISTIC — the current code would break this running workflow.\n${verdict.message}\nGuard the change with patched() (see README, "Replay a failed run").`
          : `replay of ${workflowId} failed: ${verdict.message}`,
      );
    });
}
