import type { Command } from 'commander';
import { collect, minRateArg, spanArg } from '../args.js';
import { addSearchFlags } from '../search-flags.js';
import { offers, type OffersOpts } from './offers.js';
import type { CliContext } from '../context.js';
import { addOutputFlags, emit, type OutputOpts } from '../output-format.js';
import { type FleetRow, type FleetTotals, fleetStatus, fleetTotals } from '../fleet.js';
import { fields, fmtDph, fmtDuration, fmtRate, fmtTime, fmtUsd, table } from '../format.js';
import { DEFAULT_MIN_RATE } from '../../../workflows/domain/policy/defaults.js';

/** The fleet table and its totals; `wide` adds each rental's start (and an ended one's close). */
function renderFleet(rows: FleetRow[], totals: FleetTotals, wide = false): string {
  if (rows.length === 0)
    return totals.ended
      ? `no running lifecycles, none ended since ${fmtTime(totals.ended.since)}`
      : 'no running lifecycles';
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
      ...(wide && totals.ended ? { ended: r.endedAt ? fmtTime(r.endedAt) : '-' } : {}),
    })),
  );
  return `${t}\n\ntotals\n${fields(totalLines(totals))}`;
}

const stageList = (byStage: Record<string, number>) =>
  Object.entries(byStage)
    .map(([s, n]) => `${n} ${s}`)
    .join(', ');

/** Rates for the running lifecycles only; cost to date says which rows it covers. */
function totalLines(totals: FleetTotals): Array<[string, string]> {
  const { ended } = totals;
  const lines: Array<[string, string]> = [
    ['lifecycles', `${totals.lifecycles}${ended ? ' running' : ''} (${stageList(totals.byStage)})`],
    ['proving', `${fmtRate(totals.promotedProofsPerHour)} (promoted instances' benchmark rates)`],
    ['billing', `${fmtDph(totals.dollarsPerHour)} (every running lifecycle)`],
    [
      '$/h per proof/h now',
      totals.dollarsPerProof === null ? '- (nothing promoted yet)' : fmtUsd(totals.dollarsPerProof),
    ],
  ];
  if (!ended) return [...lines, ['cost to date', `${fmtUsd(totals.costUsd)} GPU-$ (these lifecycles)`]];
  return [
    ...lines,
    ['ended', `${ended.lifecycles} since ${fmtTime(ended.since)} (${stageList(ended.byStage)})`],
    ['cost to date, ended', `${fmtUsd(ended.costUsd)} GPU-$ (the ended ones, closed at the destroy)`],
    ['cost to date, listed', `${fmtUsd(totals.costUsd)} GPU-$ (running and ended)`],
  ];
}

export function registerFleet(program: Command, ctx: CliContext): void {
  const fleet = program.command('fleet').description('the running fleet');
  const fleetStatusCmd = fleet
    .command('status')
    .description('running lifecycles with totals: per stage, proofs/h, $/h, $ per proof')
    .option(
      '--ended <span>',
      'also the lifecycles that ended within this span back from now (30m, 2h, 1d), at their final cost',
      spanArg('--ended'),
    );
  type FleetStatusOpts = OutputOpts & { ended?: number };
  addOutputFlags(fleetStatusCmd, 'lifecycle workflow ids', true).action(async (opts: FleetStatusOpts) => {
    const now = Date.now();
    const endedSinceMs = opts.ended === undefined ? undefined : now - opts.ended;
    const rows = await fleetStatus(await ctx.temporal(), {
      now,
      ...(endedSinceMs === undefined ? {} : { endedSinceMs }),
    });
    const totals = fleetTotals(rows, endedSinceMs === undefined ? undefined : new Date(endedSinceMs).toISOString());
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
