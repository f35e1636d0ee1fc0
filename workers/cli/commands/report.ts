import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  REPORT_BY,
  type ReportBy,
  type SpendFigures,
  type SpendReport,
} from '../../../workflows/domain/policy/spend-report.js';
import { type CliContext, output } from '../context.js';
import { formatUsd } from '../../../workflows/domain/policy/cost.js';
import { fields, fmtDph, fmtRate, fmtTime, table } from '../format.js';

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `--since`: a span back from now ("90m", "24h", "7d") or a date/time ("2026-12-01", ISO 8601). */
export function sinceArg(now = Date.now()) {
  return (text: string): string => {
    const span = /^([0-9]{1,6})([mhd])$/.exec(text);
    if (span) return new Date(now - Number(span[1]) * UNIT_MS[span[2] as keyof typeof UNIT_MS]).toISOString();
    if (/^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)) {
      const t = Date.parse(text.replace(' ', 'T'));
      if (Number.isFinite(t) && t <= now) return new Date(t).toISOString();
    }
    throw new InvalidArgumentError(
      `--since must be a span back from now (90m, 24h, 7d) or a past date/time (2026-12-01, 2026-12-01T08:00Z), got '${text}'`,
    );
  };
}

/** GPU-$ as the kill messages say them ($0.00 for none, four places under a dime). */
const usd = (x: number | null) => (x === null ? '-' : formatUsd(x));

const pct = (part: number, whole: number) => (whole > 0 ? ` (${Math.round((part / whole) * 100)} % of spend)` : '');

function summary(f: SpendFigures): Array<[string, string]> {
  return [
    ['rentals', `${f.rentals} (${f.promoted} promoted, ${f.killed} killed)`],
    ['spend now', `${fmtDph(f.spendNowDph)} (instances still rented)`],
    ['delivering', `${fmtRate(f.deliveringProofsPerHour)} (promoted instances' measured rates)`],
    [
      'spent',
      `${usd(f.spentUsd)} GPU-$ (${usd(f.beforeVerdictUsd)} before verdicts, ${usd(f.productionUsd)} in production)`,
    ],
    ['waste', `${usd(f.wasteUsd)} GPU-$ on hosts killed before promotion${pct(f.wasteUsd, f.spentUsd)}`],
    ['delivered', `${f.proofsDelivered.toFixed(1)} proofs (production time x measured rate)`],
    [
      'per proof',
      f.dollarsPerDeliveredProof === null
        ? '- (nothing delivered yet)'
        : `${usd(f.dollarsPerDeliveredProof)} GPU-$ per delivered proof (all spend, waste included)`,
    ],
  ];
}

export function renderReport(r: SpendReport): string {
  const head = `fleet report: rentals started since ${fmtTime(r.since)} (as of ${fmtTime(r.asOf)}), real units, GPU-$ at the billed price`;
  const lines = [head, fields(summary(r.total))];
  if (r.by && r.groups.length > 0) {
    lines.push(
      '',
      `by ${r.by}`,
      table(
        r.groups.map((g) => ({
          [r.by ?? 'group']: g.key,
          rentals: g.rentals,
          promoted: g.promoted,
          killed: g.killed,
          spent: usd(g.spentUsd),
          waste: usd(g.wasteUsd),
          'now $/h': fmtDph(g.spendNowDph),
          delivering: fmtRate(g.deliveringProofsPerHour),
          delivered: `${g.proofsDelivered.toFixed(1)} proofs`,
          '$/proof': usd(g.dollarsPerDeliveredProof),
        })),
      ),
    );
  }
  return lines.join('\n');
}

export function registerReport(program: Command, ctx: CliContext): void {
  program
    .command('report')
    .description(
      'what the fleet cost and delivered: spend $/h, proofs/h, $ per proof, waste on killed hosts (reads the store: DATABASE_URL)',
    )
    .option(
      '--since <when>',
      'rentals started since a span back (90m, 24h, 7d) or a date/time (default 24h)',
      sinceArg(),
    )
    .addOption(
      new Option('--by <group>', 'also break the figures down by GPU model, failure type or day').choices(REPORT_BY),
    )
    .option('--json', 'print as JSON')
    .action(async (opts: { since?: string; by?: ReportBy; json?: boolean }) => {
      const since = opts.since ?? sinceArg()('24h');
      const { fleetSpendReport } = await import('../../../activities/store/cli-reads.js');
      const report = await fleetSpendReport(await ctx.store(), { since, by: opts.by ?? null });
      output(opts.json, report, () => renderReport(report));
    });
}
