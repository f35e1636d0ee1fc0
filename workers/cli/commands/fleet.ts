import type { Command } from 'commander';
import { offerReport } from '../../../workflows/index.js';
import { collect, minRateArg } from '../args.js';
import { addSearchFlags, offerFilterOf, type SearchFlagOpts } from '../search-flags.js';
import { type CliContext, output } from '../context.js';
import { type FleetRow, fleetStatus, fleetTotals } from '../fleet.js';
import { fields, fmtDph, fmtDuration, fmtGb, fmtRate, fmtUsd, table } from '../format.js';
import { DEFAULT_MIN_RATE } from '../../../workflows/domain/policy/defaults.js';

function renderFleet(rows: FleetRow[], totals: ReturnType<typeof fleetTotals>): string {
  if (rows.length === 0) return 'no running lifecycles';
  const t = table(
    rows.map((r) => ({
      lifecycle: r.workflowId,
      instance: r.instanceId ?? '-',
      gpu: r.gpu ?? '-',
      machine: r.machineId ?? '-',
      stage: r.stage,
      'bench rate': fmtRate(r.benchRateProofsPerHour),
      price: fmtDph(r.dollarsPerHour),
      cost: fmtUsd(r.costUsd),
      age: fmtDuration(r.ageSec * 1000),
    })),
  );
  const stages = Object.entries(totals.byStage)
    .map(([s, n]) => `${n} ${s}`)
    .join(', ');
  return `${t}\n\ntotals\n${fields([
    ['lifecycles', `${totals.lifecycles} (${stages})`],
    ['proving', `${fmtRate(totals.promotedProofsPerHour)} (promoted instances' benchmark rates)`],
    ['billing', `${fmtDph(totals.dollarsPerHour)} (every running lifecycle)`],
    ['per proof', totals.dollarsPerProof === null ? '- (nothing promoted yet)' : fmtUsd(totals.dollarsPerProof)],
    ['spent', `${fmtUsd(totals.costUsd)} GPU-$ (these lifecycles, as of their last stage change)`],
  ])}`;
}

type OffersOpts = SearchFlagOpts & { gpu?: string[]; minRate: number; json?: boolean };

/** Offers ranked by the scaler's own ranking, run as a workflow so it reads the same store and Vast. */
async function offers(ctx: CliContext, opts: OffersOpts): Promise<void> {
  const report = await (
    await ctx.temporal()
  ).workflow.execute(offerReport, {
    taskQueue: ctx.taskQueue,
    workflowId: `offer-report-${Date.now()}`,
    args: [{ filter: offerFilterOf(opts), minRate: opts.minRate }],
  });
  const ranked = [...report.known, ...report.explore].map((o) => ({
    offerId: o.offerId,
    machineId: o.machineId,
    gpu: `${o.numGpus}x ${o.gpuName}`,
    ramMb: o.cpuRamMb,
    dollarsPerHour: o.dphTotal,
    predictedProofsPerHour: o.predictedRate === null ? null : Math.round(o.predictedRate * 10) / 10,
    from: o.source,
  }));
  output(opts.json, { offers: ranked, badMachinesExcluded: report.badMachines, droppedRows: report.dropped }, () => {
    const t =
      ranked.length === 0
        ? 'no offers match'
        : table(
            ranked.map((o) => ({
              offer: o.offerId,
              machine: o.machineId,
              gpu: o.gpu,
              RAM: fmtGb(o.ramMb),
              price: fmtDph(o.dollarsPerHour),
              'predicted rate': o.predictedProofsPerHour === null ? 'unknown' : fmtRate(o.predictedProofsPerHour),
              'per $':
                o.predictedProofsPerHour === null
                  ? '-'
                  : `${(o.predictedProofsPerHour / o.dollarsPerHour).toFixed(1)} proofs/$`,
              from: o.from,
            })),
          );
    const dropped =
      report.dropped.count > 0
        ? `\n${report.dropped.count} offer row(s) from Vast unusable, left out (first: ${report.dropped.firstReason})`
        : '';
    return `${t}\n${report.badMachines.length} bad machine(s) excluded${dropped}`;
  });
}

export function registerFleet(program: Command, ctx: CliContext): void {
  const fleet = program.command('fleet').description('the running fleet');
  fleet
    .command('status')
    .description('running lifecycles with totals: per stage, proofs/h, $/h, $ per proof')
    .option('--json', 'print as JSON')
    .action(async (opts: { json?: boolean }) => {
      const rows = await fleetStatus(await ctx.temporal());
      const totals = fleetTotals(rows);
      output(opts.json, { lifecycles: rows, totals }, () => renderFleet(rows, totals));
    });

  addSearchFlags(
    program
      .command('offers')
      .description('current Vast offers ranked by predicted proofs/h per $ (bad machines dropped)')
      .option('--gpu <model>', 'a GPU model to include (repeatable)', collect)
      .option(
        '--min-rate <proofs/h>',
        `keep/kill bar used to judge what is worth exploring (default ${DEFAULT_MIN_RATE})`,
        minRateArg,
        DEFAULT_MIN_RATE,
      )
      .option('--json', 'print as JSON'),
  ).action((opts: OffersOpts) => offers(ctx, opts));
}
