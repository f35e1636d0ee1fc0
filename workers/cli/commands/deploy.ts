// Type-only: the CLI names workflows by their registered names, so a command does not load the workflow
// code (and its imports) at start; `satisfies keyof typeof Workflows` keeps each name a registered one.
import type * as Workflows from '../../../workflows/index.js';
import { lifecycleStaticDetails, lifecycleStaticSummary } from '../../../workflows/ui/summaries.js';
import { lifecycleWorkflowId } from '../../../workflows/domain/task-queues.js';
import { DEFAULT_MIN_RATE } from '../../../workflows/domain/policy/defaults.js';
import type { Command } from 'commander';
import { minRateArg, offerIdArg } from '../args.js';
import { CliError, type CliContext, output } from '../context.js';
import { fmtDph, fmtRate, fmtTime } from '../format.js';
import { sdk } from '../sdk.js';
import { addTimeScaleFlag, startClock } from '../units.js';
import { workerHasWebhook } from '../webhook.js';

export interface DeployOpts {
  minRate?: number;
  timeScale?: number;
  json?: boolean;
}

/** The offer checked (not already rented by us, still on the market, its machine's marks said), then started. */
export async function deploy(ctx: CliContext, offerId: number, opts: DeployOpts): Promise<void> {
  const client = await ctx.temporal();
  const workflowId = lifecycleWorkflowId(offerId);
  // First: a rented offer is off the market, so "not on the market" would hide the real reason.
  const existing = await client.workflow
    .getHandle(workflowId)
    .describe()
    .catch(() => null);
  if (existing?.status.name === 'RUNNING')
    throw new CliError(`a lifecycle ${workflowId} for offer ${offerId} is already running; nothing deployed`);
  const [check, webhook] = await Promise.all([
    client.workflow.execute<typeof Workflows.offerCheck>('offerCheck' satisfies keyof typeof Workflows, {
      taskQueue: ctx.taskQueue,
      workflowId: `offer-check-${offerId}-${Date.now()}`,
      args: [{ offerId }],
    }),
    workerHasWebhook(client, ctx.taskQueue),
  ]);
  if (!check.offer)
    throw new CliError(`offer ${offerId} is not on the market now (taken, or no such offer); nothing deployed`);
  const bad = check.badMachine && !check.badMachine.ignored ? check.badMachine : null;
  if (bad)
    console.error(
      `warning: machine ${bad.machineId} is marked bad (${bad.source}, ${fmtTime(bad.markedAt)}): ${bad.reason}\n` +
        `         deploying anyway; if it is fixed, run: gpu-fleet machines ignore ${bad.machineId} --reason TEXT`,
    );
  const minRate = opts.minRate ?? DEFAULT_MIN_RATE;
  const startFacts = { offer: check.offer, minRate, startedBy: `${ctx.operator} (gpu-fleet deploy)` };
  try {
    await client.workflow.start<typeof Workflows.instanceLifecycle>(
      'instanceLifecycle' satisfies keyof typeof Workflows,
      {
        taskQueue: ctx.taskQueue,
        workflowId,
        args: [
          {
            offerId,
            minRate,
            // The operator's own bar for this rental: a kill judged on it does not mark the machine.
            ...(opts.minRate !== undefined ? { verdicts: { operatorBar: true } } : {}),
            clock: startClock(opts.timeScale),
            // No webhook on the worker: no notify step in this lifecycle, rather than one that does nothing.
            notify: webhook,
          },
        ],
        staticSummary: lifecycleStaticSummary(startFacts),
        staticDetails: lifecycleStaticDetails(startFacts),
      },
    );
  } catch (err) {
    if (err instanceof sdk.WorkflowExecutionAlreadyStartedError)
      throw new CliError(`a lifecycle ${workflowId} for offer ${offerId} is already running; nothing deployed`);
    throw err;
  }
  const o = check.offer;
  const link = ctx.uiLink(workflowId);
  output(opts.json, { workflowId, offer: o, minRateProofsPerHour: minRate, badMachine: bad, ui: link }, () =>
    [
      `started ${workflowId}: offer ${offerId}, ${o.numGpus}x ${o.gpuName} on machine ${o.machineId}, ${fmtDph(o.dphTotal)}, min ${fmtRate(minRate)}` +
        (opts.minRate !== undefined ? ' (your bar for this rental: a rate kill under it marks nothing)' : ''),
      link ? `Temporal UI: ${link}` : 'Temporal UI: set TEMPORAL_UI_URL to get a link',
    ].join('\n'),
  );
}

/** `deploy`: its own module, so a read never loads what starting a lifecycle needs. */
export function registerDeploy(program: Command, ctx: CliContext): void {
  addTimeScaleFlag(
    program
      .command('deploy')
      .description('start an instance lifecycle for a Vast offer (warns when its machine is marked bad)')
      .argument('<offerId>', 'the Vast offer id (a whole number)', offerIdArg)
      .option('--min-rate <proofs/h>', `keep/kill bar in proofs per hour (default ${DEFAULT_MIN_RATE})`, minRateArg)
      .option('--json', 'print the result as JSON'),
  ).action((offerId: number, opts: DeployOpts) => deploy(ctx, offerId, opts));
}
