// Type-only: the workflow is started by its registered name, without loading workflow code at start.
import type * as Workflows from '../../../workflows/index.js';
import type { MachineRecord } from '../../../activities/store/queries.js';
import type { LeftOutOffer } from '../../../workflows/domain/policy/scaler-ranking.js';
import type { ValuedOffer } from '../../../workflows/domain/policy/value-ranking.js';
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
  /** Proofs/h expected (the prediction's median). */
  predictedProofsPerHour: number;
  /** Proofs/h at the upper confidence bound: what the scaler ranks by. */
  upperProofsPerHour: number;
  /** The rank: proofs/h at the bound per billed $/h. */
  score: number;
  /** What the prediction rests on: machine, class, model, prior or unknown (value-ranking.ts). */
  source: ValuedOffer['source'];
}

/** An offer the ranking left out, and why (the scaler passes it over for the same reason). */
interface LeftOutRow {
  offerId: number;
  machineId: number;
  gpu: string;
  dollarsPerHour: number;
  reason: LeftOutOffer['reason'];
  /** For `under min rate`: what its prediction rests on (a machine's own benchmark is judged as measured). */
  source: ValuedOffer['source'] | null;
  predictedProofsPerHour: number | null;
  upperProofsPerHour: number | null;
}

/** A machine whose offers were left out, and why: the bad mark as recorded (by the rule or an operator). */
interface Excluded {
  machineId: number;
  markedBy: 'rule' | 'operator';
  reason: string;
  markedAt: string | null;
}

const tenth = (x: number) => Math.round(x * 10) / 10;

function row(o: ValuedOffer): OfferRow {
  return {
    offerId: o.offerId,
    machineId: o.machineId,
    gpu: `${o.numGpus}x ${o.gpuName}`,
    ramMb: o.cpuRamMb,
    dollarsPerHour: o.dphTotal,
    searchedDollarsPerHour: o.searchedDph ?? null,
    predictedProofsPerHour: tenth(o.predictedRate),
    upperProofsPerHour: tenth(o.upperRate),
    score: tenth(o.score),
    source: o.source,
  };
}

function leftOutRow(o: LeftOutOffer): LeftOutRow {
  return {
    offerId: o.offerId,
    machineId: o.machineId,
    gpu: `${o.numGpus}x ${o.gpuName}`,
    dollarsPerHour: o.dphTotal,
    reason: o.reason,
    source: o.source ?? null,
    predictedProofsPerHour: o.predictedRate === undefined ? null : tenth(o.predictedRate),
    upperProofsPerHour: o.upperRate === undefined ? null : tenth(o.upperRate),
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
      predicted: fmtRate(o.predictedProofsPerHour),
      bound: fmtRate(o.upperProofsPerHour),
      'per $ at bound': `${o.score.toFixed(1)} proofs/$`,
      source: o.source,
    })),
  );
}

/** Why an offer is not in the table, in the operator's words. */
function reasonText(o: LeftOutRow, minRate: number): string {
  switch (o.reason) {
    case 'rented':
      return 'an open rental of ours holds it';
    case 'bad':
      return 'its machine is marked bad (below)';
    case 'resting':
      return 'its machine rests after a recent inconclusive verdict';
    case 'free':
      return 'priced at $0/h (not a real offer)';
    case 'same machine':
      return 'another offer of its machine ranks instead';
    case 'under min rate':
      if (o.source === 'machine')
        return `its own benchmark, ${fmtRate(o.predictedProofsPerHour)}, is under --min-rate ${minRate}`;
      return (
        `under --min-rate ${minRate} even at its bound (predicted ${fmtRate(o.predictedProofsPerHour)}, ` +
        `bound ${fmtRate(o.upperProofsPerHour)}, from ${o.source ?? 'the prior'})`
      );
  }
}

// The scaler's order (value-ranking.ts fillPortfolio): known kinds down the table, unknown ones in exploration slots.
const LEGEND = [
  'predicted: expected proofs/h; bound: the upper confidence bound the scaler ranks by, per $ (best first)',
  'source: machine (its own benchmark), class (its model, GPU count and RAM), model, prior (reference figure) or',
  'unknown (a generic prior: the scaler tries these only in its exploration slots, after the known kinds)',
].join('\n');

/**
 * What was left out, named: each bad machine with its mark (and its offers in this search), each other offer
 * the ranking passed over with why, and Vast's unusable rows.
 */
export function renderExcluded(
  excluded: Excluded[],
  leftOut: LeftOutRow[],
  dropped: { count: number; firstReason: string | null },
  minRate: number,
): string {
  const offersOn = (machineId: number) => {
    const ids = leftOut.filter((o) => o.reason === 'bad' && o.machineId === machineId).map((o) => o.offerId);
    return ids.length === 0 ? '' : `; offer(s) ${ids.join(', ')}`;
  };
  const lines =
    excluded.length === 0
      ? ['no machine is marked bad: nothing excluded']
      : [
          `offers on ${excluded.length} machine(s) marked bad are excluded:`,
          ...excluded.map(
            (m) =>
              `  machine ${m.machineId}: ${m.reason} (marked by ${m.markedBy}${m.markedAt ? `, ${fmtTime(m.markedAt)}` : ''})${offersOn(m.machineId)}`,
          ),
        ];
  const passed = leftOut.filter((o) => o.reason !== 'bad');
  if (passed.length > 0) {
    lines.push(`${passed.length} offer(s) left out by the ranking:`);
    for (const o of passed)
      lines.push(
        `  offer ${o.offerId} (machine ${o.machineId}, ${o.gpu}, ${fmtDph(o.dollarsPerHour)}): ${reasonText(o, minRate)}`,
      );
  }
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
 * Offers ranked by the scaler's own ranking (offerReport runs rankForRunByValue on the scaler's inputs), run as
 * a workflow so Vast's key stays with the worker; every offer it left out comes back with why, and the bad
 * machines' marks, so nothing the search found is missing unexplained.
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
  const rows = report.ranked.map(row);
  const leftOut = report.leftOut.map(leftOutRow);
  const excluded = excludedOf(report.badMachines, report.excluded);
  const tail = () => renderExcluded(excluded, leftOut, report.dropped, opts.minRate);
  const legend = rows.length > 0 ? `${LEGEND}\n` : '';
  emit(
    opts,
    {
      offers: rows,
      leftOut,
      excludedMachines: excluded,
      restingMachines: report.restingMachines,
      droppedRows: report.dropped,
    },
    {
      text: () => `${renderTable(rows, false)}\n${legend}${tail()}`,
      wide: () => `${renderTable(rows, true)}\n${legend}${tail()}`,
      names: () => rows.map((o) => String(o.offerId)),
    },
  );
}
