import type { Command } from 'commander';
import { collect, minRateArg } from '../args.js';
import { addSearchFlags } from '../search-flags.js';
import { offers, type OffersOpts } from './offers.js';
import type { CliContext } from '../context.js';
import { addOutputFlags, emit, type OutputOpts } from '../output-format.js';
import { type FleetRow, fleetStatus, fleetTotals } from '../fleet.js';
import { fields, fmtDph, fmtDuration, fmtRate, fmtTime, fmtUsd, table } from '../format.js';
import { DEFAULT_MIN_RATE } from '../../../workflows/domain/policy/defaults.js';

/** The fleet table and its totals; `wide` adds each rental's start. */
function renderFleet(rows: FleetRow[], totals: ReturnType<typeof fleetTotals>, wide = false): string {
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
      'cost to date': fmtUsd(r.costUsd),
      age: fmtDuration(r.ageSec * 1000),
      ...(wide ? { 'rented since': fmtTime(r.rentalStartedAt) } : {}),
    })),
  );
  const stages = Object.entries(totals.byStage)
    .map(([s, n]) => `${n} ${s}`)
    .join(', ');
  return `${t}\n\ntotals\n${fields([
    ['lifecycles', `${totals.lifecycles} (${stages})`],
    ['proving', `${fmtRate(totals.promotedProofsPerHour)} (promoted instances' benchmark rates)`],
    ['billing', `${fmtDph(totals.dollarsPerHour)} (every running lifecycle)`],
    [
      '$/h per proof/h now',
      totals.dollarsPerProof === null ? '- (nothing promoted yet)' : fmtUsd(totals.dollarsPerProof),
    ],
    ['cost to date', `${fmtUsd(totals.costUsd)} GPU-$ (these lifecycles)`],
  ])}`;
}

export function registerFleet(program: Command, ctx: CliContext): void {
  const fleet = program.command('fleet').description('the running fleet');
  const fleetStatusCmd = fleet
    .command('status')
    .description('running lifecycles with totals: per stage, proofs/h, $/h, $ per proof');
  addOutputFlags(fleetStatusCmd, 'lifecycle workflow ids', true).action(async (opts: OutputOpts) => {
    const rows = await fleetStatus(await ctx.temporal());
    const totals = fleetTotals(rows);
    emit(
      opts,
      { lifecycles: rows, totals },
      {
        text: () => renderFleet(rows, totals),
        wide: () => renderFleet(rows, totals, true),
        names: () => rows.map((r) => r.workflowId),
      },
    );
  });

  const offersCmd = addSearchFlags(
    program
      .command('offers')
      .description('current Vast offers ranked by predicted proofs/h per $ (bad machines dropped)')
      .option('--gpu <model>', 'a GPU model to include (repeatable)', collect)
      .option(
        '--min-rate <proofs/h>',
        `keep/kill bar used to judge what is worth exploring (default ${DEFAULT_MIN_RATE})`,
        minRateArg,
        DEFAULT_MIN_RATE,
      ),
  );
  addOutputFlags(offersCmd, 'the offer ids', true).action((opts: OffersOpts) => offers(ctx, opts));
}
