import type { Command } from 'commander';
import { machineIdArg } from '../args.js';
import type { CliContext } from '../context.js';
import { addOutputFlags, emit, type OutputOpts } from '../output-format.js';
import { table } from '../format.js';
import { killedTodayByType, listUrl, savedViews, type SavedView } from '../views.js';

export function registerViews(program: Command, ctx: CliContext): void {
  const views = program
    .command('views')
    .description('Temporal UI links for the saved views: killed today (by type), benchmarking now, the promoted fleet')
    .option('--machine <machineId>', "add one machine's history", machineIdArg)
    .option('--counts', 'count each view now (one visibility count per view; killed-today split by failure type)');
  addOutputFlags(views, 'view names', false).action(
    async (opts: OutputOpts & { machine?: number; counts?: boolean }) => {
      const now = new Date();
      const base = ctx.uiBase();
      let found: Array<SavedView & { count?: number }> = savedViews(now, opts.machine?.toString());
      if (opts.counts) {
        const client = await ctx.temporal();
        const count = async (v: SavedView) => ({ ...v, count: (await client.workflow.count(v.query)).count });
        // Per failure type only where there is one: twenty empty rows would hide the few that matter.
        const byType = (await Promise.all(killedTodayByType(now).map(count))).filter((v) => v.count > 0);
        found = [...(await Promise.all(found.map(count))), ...byType];
      }
      const rows = found.map((v) => ({ ...v, url: base ? listUrl(base, ctx.namespace, v.query) : null }));
      emit(
        opts,
        { views: rows },
        {
          names: () => rows.map((r) => r.name),
          text: () =>
            [
              table(
                rows.map((r) => ({
                  view: r.name,
                  ...(opts.counts ? { now: r.count ?? '-' } : {}),
                  what: r.what,
                })),
              ),
              '',
              ...rows.map((r) => `${r.name}:\n  ${r.query}${r.url ? `\n  ${r.url}` : ''}`),
              base ? '' : '\n(set TEMPORAL_UI_URL for links)',
            ].join('\n'),
        },
      );
    },
  );
}
