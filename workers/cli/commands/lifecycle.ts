import type { Command } from 'commander';
import { reasonArg, wholeNumber } from '../args.js';
import { CliError, type CliContext, output } from '../context.js';
import { addOutputFlags, emit, formatOf, type OutputOpts } from '../output-format.js';
import { resolveLifecycleId, visibilityLister } from '../resolve.js';
import { fields, fmtDph, fmtDuration, fmtRate, fmtTime, fmtUsd } from '../format.js';
import { type StatusView, statusView } from '../status.js';
import { updatePromote } from '../messages.js';
import { sdk } from '../sdk.js';

export function renderStatus(v: StatusView): string {
  const left = v.stageTimeLeftSec === null ? '' : `, ${fmtDuration(v.stageTimeLeftSec * 1000)} left of its time budget`;
  const p = v.progress;
  const lines: Array<[string, string]> = [
    ['stage', `${v.stage}${left}`],
    [
      'progress',
      p
        ? `${p.completedProofs} of ${p.requestedProofs} benchmark proofs in ${fmtDuration(p.elapsedSec * 1000)} (${p.from})`
        : '-',
    ],
    ['rate', v.rateProofsPerHour === null ? '-' : `${fmtRate(v.rateProofsPerHour)} (${v.rateKind})`],
    ...(v.productionRateProofsPerHour === null
      ? []
      : [['proving', `${fmtRate(v.productionRateProofsPerHour)} (last watch window)`] as [string, string]]),
    [
      'price',
      v.dollarsPerHour === null
        ? '-'
        : `${fmtDph(v.dollarsPerHour)}${v.dollarsPerProof === null ? '' : `, ${fmtUsd(v.dollarsPerProof)} per proof`}`,
    ],
    ['rented for', `${fmtDuration(v.rentalAgeSec * 1000)} (since ${fmtTime(v.rentalStartedAt)})`],
    [
      'cost to date',
      v.cost
        ? `${fmtUsd(v.cost.totalUsd)} GPU-$ (${fmtUsd(v.cost.beforeVerdictUsd)} before the verdict, ${fmtUsd(v.cost.productionUsd)} in production)`
        : '- (nothing rented yet)',
    ],
    [
      'instance',
      `${v.instanceId ?? '-'} on machine ${v.machineId ?? '-'}, ${v.gpu ?? 'GPU not known yet'} (offer ${v.offerId})`,
    ],
  ];
  if (v.failureType) lines.push(['failure', v.failureType]);
  if (v.cause) lines.push(['cause', v.cause]);
  if (v.waitingOn) {
    const w = v.waitingOn;
    lines.push([
      'waiting',
      `on our database since ${fmtTime(w.since)} (${w.write}, ${w.attempts} tries): ${w.lastError}`,
    ]);
  }
  if (v.pendingActivity) lines.push(['running', `${v.pendingActivity.type} (attempt ${v.pendingActivity.attempt})`]);
  if (v.clock.scale !== 1)
    lines.push([
      'time scale',
      `simulated ${Math.round(1 / v.clock.scale)}x; rates, durations and $ shown in real time`,
    ]);
  return `${v.workflowId} (${v.execution.toLowerCase()})\n${fields(lines)}`;
}

const LIFECYCLE_REF = 'the offer id, or the workflow id or a unique prefix of it';

/** The workflow id the operator meant (resolve.ts): an offer id, a whole id or a unique prefix. */
async function lifecycleId(ctx: CliContext, ref: string): Promise<string> {
  const client = await ctx.temporal();
  return resolveLifecycleId(ref, visibilityLister(client));
}

function registerStatus(program: Command, ctx: CliContext): void {
  const status = program
    .command('status')
    .description('a lifecycle in plain words: stage and time left in it, progress, rate, price')
    .argument('<lifecycle>', LIFECYCLE_REF)
    .option(
      '--watch [seconds]',
      'refresh every N seconds (default 2) until the lifecycle closes',
      wholeNumber('--watch', 1, 3600, 's'),
    );
  addOutputFlags(status, 'the workflow id', false).action(
    async (ref: string, opts: OutputOpts & { watch?: number | true }) => {
      const format = formatOf(opts);
      const workflowId = await lifecycleId(ctx, ref);
      const client = await ctx.temporal();
      const every = opts.watch === true ? 2 : opts.watch;
      for (;;) {
        const v = await statusView(client, workflowId);
        if (every && format === 'text' && process.stdout.isTTY) process.stdout.write('\x1b[2J\x1b[H');
        emit(opts, v, { text: () => renderStatus(v), names: () => [v.workflowId] });
        if (!every || v.execution !== 'RUNNING') return;
        await new Promise((r) => setTimeout(r, every * 1000));
      }
    },
  );
}

function registerKill(program: Command, ctx: CliContext): void {
  program
    .command('kill')
    .description('cancel a lifecycle; waits until its instance is destroyed unless --no-wait')
    .argument('<lifecycle>', LIFECYCLE_REF)
    .requiredOption('--reason <text>', 'why (recorded with the cancel request)', reasonArg)
    .option('--no-wait', 'return once the cancel is requested')
    .option(
      '--timeout <seconds>',
      'how long to wait for the destroy (default 600)',
      wholeNumber('--timeout', 1, 86_400, 's'),
      600,
    )
    .option('--json', 'print the result as JSON')
    .action(async (ref: string, opts: { reason: string; wait: boolean; timeout: number; json?: boolean }) => {
      const workflowId = await lifecycleId(ctx, ref);
      const client = await ctx.temporal();
      const { killLifecycle } = await import('./kill.js');
      const r = await killLifecycle(client, ctx, workflowId, opts);
      output(opts.json, r, () => r.message);
      if (!r.ok) process.exitCode = 1;
    });
}

/** The override as an Update: the lifecycle answers, accepted before the verdict or refused with it. */
async function promote(ctx: CliContext, ref: string, opts: { reason: string; json?: boolean }): Promise<void> {
  const workflowId = await lifecycleId(ctx, ref);
  const handle = (await ctx.temporal()).workflow.getHandle(workflowId);
  const desc = await handle.describe();
  if (desc.status.name !== 'RUNNING')
    throw new CliError(`${workflowId} is ${desc.status.name.toLowerCase()}: it has no verdict left to override`);
  try {
    const answer = await updatePromote(handle, { operator: ctx.operator, reason: opts.reason });
    output(
      opts.json,
      { workflowId, ...answer },
      () => `${workflowId} accepted the promote override (in stage ${answer.stage}); it applies at ${answer.appliesAt}`,
    );
  } catch (err) {
    // The lifecycle's validator refused it: print its reason ("verdict already given: killed …").
    if (!(err instanceof sdk.WorkflowUpdateFailedError)) throw err;
    const reason = err.cause instanceof Error ? err.cause.message : err.message;
    throw new CliError(`${workflowId} refused the promote override: ${reason}`);
  }
}

function registerPromote(program: Command, ctx: CliContext): void {
  program
    .command('promote')
    .description('operator override: promote at the verdict even if under the minimum rate (accepted or refused)')
    .argument('<lifecycle>', LIFECYCLE_REF)
    .requiredOption('--reason <text>', 'why (recorded in history with your name)', reasonArg)
    .option('--json', 'print the answer as JSON')
    .action((ref: string, opts: { reason: string; json?: boolean }) => promote(ctx, ref, opts));
}

function registerLogs(program: Command, ctx: CliContext): void {
  const logs = program
    .command('logs')
    .description(
      "a lifecycle's stored log tails (cuzk-daemon log, benchmark output); kept after destroy (reads the store: DATABASE_URL)",
    )
    .argument('<lifecycle>', LIFECYCLE_REF)
    .option('--source <name>', 'only this source (e.g. cuzk-daemon, output)');
  addOutputFlags(logs, 'rental/source of each tail', false).action(
    async (ref: string, opts: OutputOpts & { source?: string }) => {
      formatOf(opts);
      const workflowId = await lifecycleId(ctx, ref);
      const { storedLogTails } = await import('../../../activities/store/cli-reads.js');
      const all = await storedLogTails(await ctx.store(), workflowId);
      const tails = all.filter((t) => !opts.source || t.source === opts.source);
      emit(
        opts,
        { workflowId, tails },
        {
          names: () => tails.map((t) => `${t.rentalKey}/${t.source}`),
          text: () =>
            tails.length === 0
              ? `no log tails stored for ${workflowId}${opts.source ? ` from ${opts.source}` : ''} (tails are stored when a lifecycle kills its instance)`
              : tails
                  .map(
                    (t) =>
                      `=== ${t.source} of rental ${t.rentalKey} (stored ${fmtTime(t.at)}, ${t.text.length} chars)\n${t.text.trimEnd()}`,
                  )
                  .join('\n\n'),
        },
      );
    },
  );
}

/** status, kill, promote and logs: one existing lifecycle at a time (deploy, which starts one: deploy.ts). */
export function registerLifecycle(program: Command, ctx: CliContext): void {
  registerStatus(program, ctx);
  registerKill(program, ctx);
  registerPromote(program, ctx);
  registerLogs(program, ctx);
}
