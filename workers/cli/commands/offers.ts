// Type-only: the workflow is started by its registered name, without loading workflow code at start.
import type * as Workflows from '../../../workflows/index.js';
import type { MachineRecord } from '../../../activities/store/queries.js';
import type { RankedOffer } from '../../../workflows/domain/policy/offer-ranking.js';
import { offerFilterOf, type SearchFlagOpts } from '../search-flags.js';
import type { CliContext } from '../context.js';
import { fmtDph, fmtGb, fmtRate, fmtTime, table } from '../format.js';
import { emit, type OutputOpts } from '../output-format.js';

export type OffersOpts = SearchFlagOpts & OutputOpts & { gpu?: string[]; minRate: number };

interface OfferRow {
  offerId: number;
  machineId: number;
  gpu: string;
  ramMb: number;
  dollarsPerHour: number;
  /** $/h as Vast's search quoted it, before our disk's storage was priced in. */
  searchedDollarsPerHour: number | null;
  /** The ranking's score: predicted proofs/h per $/h (exploration offers rank by price instead). */
  score: number;
  predictedProofsPerHour: number | null;
  from: RankedOffer['source'];
}

/** A machine whose offers were left out, and why: the bad mark as recorded (by the rule or an operator). */
interface Excluded {
  machineId: number;
  markedBy: 'rule' | 'operator';
  reason: string;
  markedAt: string | null;
}

function row(o: RankedOffer): OfferRow {
  return {
    offerId: o.offerId,
    machineId: o.machineId,
    gpu: `${o.numGpus}x ${o.gpuName}`,
    ramMb: o.cpuRamMb,
    dollarsPerHour: o.dphTotal,
    searchedDollarsPerHour: o.searchedDph ?? null,
    score: o.score,
    predictedProofsPerHour: o.predictedRate === null ? null : Math.round(o.predictedRate * 10) / 10,
    from: o.source,
  };
}

function renderTable(rows: OfferRow[], wide: boolean): string {
  if (rows.length === 0) return 'no offers match';
  return table(
    rows.map((o) => ({
      offer: o.offerId,
      machine: o.machineId,
      gpu: o.gpu,
      RAM: fmtGb(o.ramMb),
      price: fmtDph(o.dollarsPerHour),
      ...(wide ? { 'search quoted': o.searchedDollarsPerHour === null ? '-' : fmtDph(o.searchedDollarsPerHour) } : {}),
      'predicted rate': o.predictedProofsPerHour === null ? 'unknown' : fmtRate(o.predictedProofsPerHour),
      'per $':
        o.predictedProofsPerHour === null
          ? '-'
          : `${(o.predictedProofsPerHour / o.dollarsPerHour).toFixed(1)} proofs/$`,
      from: o.from,
      ...(wide ? { score: o.score.toFixed(2) } : {}),
    })),
  );
}

/** What was left out, named: each bad machine with its mark, and Vast's unusable rows. */
export function renderExcluded(excluded: Excluded[], dropped: { count: number; firstReason: string | null }): string {
  const lines =
    excluded.length === 0
      ? ['no machine is marked bad: nothing excluded']
      : [
          `offers on ${excluded.length} machine(s) marked bad are excluded:`,
          ...excluded.map(
            (m) =>
              `  machine ${m.machineId}: ${m.reason} (marked by ${m.markedBy}${m.markedAt ? `, ${fmtTime(m.markedAt)}` : ''})`,
          ),
        ];
  if (dropped.count > 0)
    lines.push(`${dropped.count} offer row(s) from Vast unusable, left out (first: ${dropped.firstReason})`);
  return lines.join('\n');
}

function excludedOf(bad: number[], records: MachineRecord[]): Excluded[] {
  const byId = new Map(records.map((r) => [r.machineId, r]));
  return bad.map((machineId) => {
    const r = byId.get(machineId);
    return {
      machineId,
      markedBy: r?.source === 'rule' ? 'rule' : 'operator',
      reason: r?.reason ?? 'marked bad (its record was not read back)',
      markedAt: r?.markedAt ?? null,
    };
  });
}

/**
 * Offers ranked by the scaler's own ranking, run as a workflow so Vast's key stays with the worker; it
 * returns the excluded machines' marks too, so they are named with their reasons.
 */
export async function offers(ctx: CliContext, opts: OffersOpts): Promise<void> {
  const client = await ctx.temporal();
  const report = await client.workflow.execute<typeof Workflows.offerReport>(
    'offerReport' satisfies keyof typeof Workflows,
    {
      taskQueue: ctx.taskQueue,
      workflowId: `offer-report-${Date.now()}`,
      args: [{ filter: offerFilterOf(opts), minRate: opts.minRate }],
    },
  );
  const rows = [...report.known, ...report.explore].map(row);
  const excluded = excludedOf(report.badMachines, report.excluded);
  const tail = () => renderExcluded(excluded, report.dropped);
  emit(
    opts,
    { offers: rows, excludedMachines: excluded, droppedRows: report.dropped },
    {
      text: () => `${renderTable(rows, false)}\n${tail()}`,
      wide: () => `${renderTable(rows, true)}\n${tail()}`,
      names: () => rows.map((o) => String(o.offerId)),
    },
  );
}
