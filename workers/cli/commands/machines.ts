import type { Client } from '@temporalio/client';
import type { Command } from 'commander';
// Type-only: the workflow is started by its registered name, without loading workflow code at start.
import type * as Workflows from '../../../workflows/index.js';
import { machineIdArg, reasonArg } from '../args.js';
import type { CliContext } from '../context.js';
import { addOutputFlags, emit, type OutputOpts } from '../output-format.js';
import { fmtTime, table } from '../format.js';

interface LastAction {
  action: string;
  operator: string;
  reason: string;
  at: string;
}

/** The newest operator action per machine, from the machineAdmin workflows' memo (who and why). */
async function lastActions(client: Client): Promise<Map<number, LastAction>> {
  const out = new Map<number, LastAction>();
  for await (const wf of client.workflow.list({
    query: `WorkflowType = "${'machineAdmin' satisfies keyof typeof Workflows}" AND ExecutionStatus = "Completed"`,
  })) {
    const m = /^machine-(\d+)-(bad|ignore|unignore)-/.exec(wf.workflowId);
    const memo = wf.memo as { operator?: string; reason?: string } | undefined;
    if (!m) continue;
    const id = Number(m[1]);
    const at = wf.startTime.toISOString();
    const prev = out.get(id);
    if (prev && prev.at >= at) continue;
    out.set(id, { action: m[2] ?? '', operator: memo?.operator ?? '?', reason: memo?.reason ?? '?', at });
  }
  return out;
}

export function registerMachines(program: Command, ctx: CliContext): void {
  const machines = program.command('machines').description('machines marked bad, and the operator overrides');
  const list = machines
    .command('list')
    .description(
      'machines marked bad (by the rule or an operator) and ignored ones: reason, who, when (reads the store: DATABASE_URL)',
    );
  addOutputFlags(list, 'machine ids', false).action(async (opts: OutputOpts) => {
    const { markedMachines } = await import('../../../activities/store/cli-reads.js');
    // The marks from the store, who did what last from visibility: both at once.
    const [marked, actions] = await Promise.all([ctx.store().then(markedMachines), ctx.temporal().then(lastActions)]);
    const rows = marked.map((m) => ({ ...m, lastOperatorAction: actions.get(m.machineId) ?? null }));
    emit(
      opts,
      { machines: rows },
      {
        names: () => rows.map((m) => String(m.machineId)),
        text: () =>
          rows.length === 0
            ? 'no machine is marked bad'
            : table(
                rows.map((m) => ({
                  machine: m.machineId,
                  state: m.ignored ? 'ignored' : 'bad',
                  'marked by': m.source === 'rule' ? 'rule' : `operator`,
                  reason: m.reason,
                  'marked at': fmtTime(m.markedAt),
                  'last operator action': m.lastOperatorAction
                    ? `${m.lastOperatorAction.action} by ${m.lastOperatorAction.operator} at ${fmtTime(m.lastOperatorAction.at)}: ${m.lastOperatorAction.reason}`
                    : '-',
                })),
              ),
      },
    );
  });

  for (const action of ['bad', 'ignore', 'unignore'] as const) {
    const what = {
      bad: 'mark a machine bad: offers on it are no longer rented',
      ignore: "ignore a machine's bad mark (it is rented again)",
      unignore: "honour a machine's bad mark again",
    }[action];
    machines
      .command(action)
      .description(what)
      .argument('<machineId>', 'the Vast machine id (a whole number)', machineIdArg)
      .requiredOption('--reason <text>', 'why (recorded with your name)', reasonArg)
      .action(async (machineId: number, opts: { reason: string }) => {
        const res = await (
          await ctx.temporal()
        ).workflow.execute<typeof Workflows.machineAdmin>('machineAdmin' satisfies keyof typeof Workflows, {
          taskQueue: ctx.taskQueue,
          workflowId: `machine-${machineId}-${action}-${Date.now()}`,
          memo: { operator: ctx.operator, reason: opts.reason },
          args: [{ machineId, action, operator: ctx.operator, reason: opts.reason }],
        });
        if (!res.changed) {
          console.error(`machine ${machineId} was never marked bad; nothing to ${action}`);
          process.exitCode = 1;
          return;
        }
        console.log(`machine ${machineId}: ${action} recorded (by ${ctx.operator})`);
      });
  }
}
