import { type Client, ScheduleNotFoundError, type ScheduleDescription } from '@temporalio/client';
import type { Command } from 'commander';
import { type FleetScalerInput, fleetScaler } from '../../../workflows/fleet-scaler.js';
import { collect, decimalNumber, wholeNumber } from '../args.js';
import { CliError, type CliContext } from '../context.js';
import { addOutputFlags, emit, type OutputOpts } from '../output-format.js';
import { fields, fmtDph, fmtDuration, fmtRate, fmtTime } from '../format.js';
import { addTimeScaleFlag, startClock } from '../units.js';
import {
  DEFAULT_SCHEDULE_INTERVAL_SEC,
  ensureReconcilerSchedule,
  ensureScalerSchedule,
  RECONCILER_SCHEDULE_ID,
  SCALER_SCHEDULE_ID,
} from '../../setup/schedules.js';
import { addSearchFlags, offerFilterOf, type SearchFlagOpts } from '../search-flags.js';
import { capacityFromFlags, type CapacityFlags, capacityText } from '../capacity-flags.js';
import { DEFAULT_MIN_RATE } from '../../../workflows/domain/policy/defaults.js';
import { workerHasWebhook } from '../webhook.js';

const KNOWN = `${SCALER_SCHEDULE_ID}, ${RECONCILER_SCHEDULE_ID}`;

/** The server's "not found" in words an operator can act on. */
async function onSchedule<T>(id: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ScheduleNotFoundError || (err as { code?: number }).code === 5)
      throw new CliError(
        `no schedule '${id}' on this server (this fleet's are ${KNOWN}; create them with: gpu-fleet schedule setup)`,
      );
    throw err;
  }
}

export interface ScheduleStatus {
  scheduleId: string;
  paused: boolean;
  note: string | null;
  everySec: number | null;
  nextRunAt: string | null;
  scaler: {
    targetProofsPerHour: number;
    maxDollarsPerHour: number;
    maxInstances: number;
    maxConcurrentBenchmarks: number;
    minRateProofsPerHour: number;
    gpuModels: string[];
    /** The on-demand/interruptible mix (null: on-demand only); rates in real proofs/h. */
    capacity: {
      onDemandFloorProofsPerHour: number;
      bidMarginPct: number;
      maxBidFraction: number;
      rebids: number;
    } | null;
  } | null;
  lastRun: { workflowId: string; startedAt: string; status: string; result: unknown; failure: string | null } | null;
}

async function scheduleStatus(client: Client, id: string): Promise<ScheduleStatus> {
  const desc: ScheduleDescription = await onSchedule(id, () => client.schedule.getHandle(id).describe());
  const every = desc.spec.intervals?.[0]?.every;
  const action = desc.action as { workflowType?: string; args?: unknown[] };
  const input =
    action.workflowType === fleetScaler.name ? (action.args?.[0] as FleetScalerInput | undefined) : undefined;
  const recent = desc.info.recentActions[desc.info.recentActions.length - 1];
  let lastRun: ScheduleStatus['lastRun'] = null;
  if (recent) {
    const h = client.workflow.getHandle(recent.action.workflow.workflowId, recent.action.workflow.firstExecutionRunId);
    const st = (await h.describe()).status.name;
    let result: unknown = null;
    let failure: string | null = null;
    if (st === 'COMPLETED') result = await h.result();
    else if (st !== 'RUNNING')
      failure = await h.result().then(
        () => null,
        (e: unknown) => (e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e)),
      );
    lastRun = {
      workflowId: recent.action.workflow.workflowId,
      startedAt: recent.takenAt.toISOString(),
      status: st,
      result,
      failure,
    };
  }
  return {
    scheduleId: id,
    paused: desc.state.paused,
    note: desc.state.note ?? null,
    everySec: typeof every === 'number' ? every / 1000 : null,
    nextRunAt: desc.info.nextActionTimes[0]?.toISOString() ?? null,
    scaler: input
      ? {
          targetProofsPerHour: input.targetRate,
          maxDollarsPerHour: input.maxDph,
          maxInstances: input.maxInstances,
          maxConcurrentBenchmarks: input.maxConcurrentBenchmarks,
          minRateProofsPerHour: input.minRate,
          gpuModels: input.filter.gpuModels,
          capacity: input.capacity
            ? {
                onDemandFloorProofsPerHour: input.capacity.onDemandFloorRate,
                bidMarginPct: input.capacity.bidMarginPct,
                maxBidFraction: input.capacity.maxBidFraction,
                rebids: input.capacity.rebids,
              }
            : null,
        }
      : null,
    lastRun,
  };
}

function lastRunText(s: ScheduleStatus): string {
  const r = s.lastRun;
  if (!r) return 'none yet';
  const head = `${r.workflowId} at ${fmtTime(r.startedAt)}: ${r.status.toLowerCase()}`;
  if (r.failure) return `${head}: ${r.failure}`;
  const res = r.result as {
    started?: unknown[];
    skipped?: unknown[];
    fleetRate?: number;
    fleetDph?: number;
    checked?: number;
    destroyed?: unknown[];
  } | null;
  if (res && Array.isArray(res.started))
    return `${head}, started ${res.started.length} lifecycle(s), skipped ${res.skipped?.length ?? 0} offer(s); fleet then ${fmtRate(res.fleetRate ?? 0)} at ${fmtDph(res.fleetDph ?? 0)}`;
  if (res && typeof res.checked === 'number')
    return `${head}, checked ${res.checked} instance(s), destroyed ${res.destroyed?.length ?? 0} orphan(s)`;
  return head;
}

function renderSchedule(s: ScheduleStatus): string {
  const lines: Array<[string, string]> = [
    ['state', s.paused ? `paused${s.note ? ` (${s.note})` : ''}` : 'active'],
    ['every', s.everySec === null ? '-' : fmtDuration(s.everySec * 1000)],
    ['next run', s.paused ? '- (paused)' : fmtTime(s.nextRunAt)],
  ];
  if (s.scaler)
    lines.push(
      ['target', fmtRate(s.scaler.targetProofsPerHour)],
      [
        'budget',
        `${fmtDph(s.scaler.maxDollarsPerHour)}, at most ${s.scaler.maxInstances} instances, ${s.scaler.maxConcurrentBenchmarks} benchmarks at once`,
      ],
      ['min rate', fmtRate(s.scaler.minRateProofsPerHour)],
      ['GPUs', s.scaler.gpuModels.join(', ')],
      ['capacity', capacityText(s.scaler.capacity)],
    );
  lines.push(['last run', lastRunText(s)]);
  return `${s.scheduleId}\n${fields(lines)}`;
}

type SetupOpts = CapacityFlags &
  SearchFlagOpts & {
    targetRate: number;
    maxDph: number;
    maxInstances: number;
    maxBenchmarks: number;
    minRate: number;
    gpu?: string[];
    every: number;
    timeScale?: number;
  };

/** The scaler's and the reconciler's schedules, created or updated to the flags. */
async function setupSchedules(ctx: CliContext, setup: Command, o: SetupOpts): Promise<void> {
  let capacity: ReturnType<typeof capacityFromFlags>;
  try {
    // Rates are real proofs/h end to end: the lifecycle converts its clock (workflows/domain/policy/clock.ts).
    capacity = capacityFromFlags(o, (real) => real);
  } catch (err) {
    // A usage error like any other flag's: exit 2 with this command's usage line.
    if (err instanceof CliError) setup.error(`error: ${err.message}`, { exitCode: 2 });
    throw err;
  }
  const c = await ctx.temporal();
  const scaler = await ensureScalerSchedule(c, {
    intervalSec: o.every,
    webhook: await workerHasWebhook(c, ctx.taskQueue),
    taskQueue: ctx.taskQueue,
    input: {
      targetRate: o.targetRate,
      maxDph: o.maxDph,
      maxInstances: o.maxInstances,
      maxConcurrentBenchmarks: o.maxBenchmarks,
      explorationSlots: 1,
      minRate: o.minRate,
      offerCheckSec: 120,
      // The clock the scaler's lifecycles run on: real time unless --time-scale says the simulators'.
      ...(o.timeScale === undefined ? {} : { lifecycle: { clock: startClock(o.timeScale) } }),
      filter: offerFilterOf(o),
      ...(capacity ? { capacity } : {}),
    },
  });
  const reconciler = await ensureReconcilerSchedule(c, { intervalSec: o.every, taskQueue: ctx.taskQueue });
  console.log(`fleet-scaler schedule ${scaler}, orphan-reconciler schedule ${reconciler} (every ${o.every} s)`);
}

function registerSetup(schedule: Command, ctx: CliContext): void {
  const setup = schedule
    .command('setup')
    .description('create or update the fleet-scaler and orphan-reconciler schedules')
    .option(
      '--target-rate <proofs/h>',
      'fleet target (default 200)',
      decimalNumber('--target-rate', 0, 1_000_000, 'proofs/h'),
      200,
    )
    .option(
      '--max-dph <$/h>',
      'budget for the whole fleet (default 5)',
      decimalNumber('--max-dph', 0, 10_000, '$/h'),
      5,
    )
    .option(
      '--max-instances <n>',
      'instances at most (default 8)',
      wholeNumber('--max-instances', 0, 1000, 'instances'),
      8,
    )
    .option(
      '--max-benchmarks <n>',
      'benchmarks at once (default 3)',
      wholeNumber('--max-benchmarks', 0, 100, 'benchmarks'),
      3,
    )
    .option(
      '--min-rate <proofs/h>',
      `keep/kill bar (default ${DEFAULT_MIN_RATE})`,
      decimalNumber('--min-rate', 0, 1_000_000, 'proofs/h', true),
      DEFAULT_MIN_RATE,
    )
    .option('--gpu <model>', 'a GPU model to rent (repeatable)', collect)
    .option(
      '--every <seconds>',
      `run interval (default ${DEFAULT_SCHEDULE_INTERVAL_SEC})`,
      wholeNumber('--every', 10, 604_800, 's'),
      DEFAULT_SCHEDULE_INTERVAL_SEC,
    );
  addCapacityOptions(setup);
  addTimeScaleFlag(setup);
  addSearchFlags(setup).action((o: SetupOpts) => setupSchedules(ctx, setup, o));
}

/** Interruptible capacity's flags (absent: on-demand only). */
function addCapacityOptions(setup: Command): void {
  setup
    .option(
      '--on-demand-floor <proofs/h>',
      'mix in interruptible capacity: on-demand rentals carry the fleet up to this rate, interruptible bids above it (default: on-demand only)',
      decimalNumber('--on-demand-floor', 0, 1_000_000, 'proofs/h'),
    )
    .option('--bid-margin <%>', 'bid this far above min_bid (default 15)', decimalNumber('--bid-margin', 0, 1000, '%'))
    .option(
      '--max-bid-fraction <0-1>',
      "never bid above this fraction of the offer's on-demand price (default 0.8)",
      decimalNumber('--max-bid-fraction', 0, 1, '', true),
    )
    .option(
      '--rebids <n>',
      'bids placed again higher after a bid too low at create (default 1)',
      wholeNumber('--rebids', 0, 5),
    );
}

function registerScheduleStatus(schedule: Command, ctx: CliContext): void {
  const status = schedule
    .command('status')
    .description("target, budget, paused, next and last run (default: both of this fleet's schedules)")
    .argument('[scheduleId...]', `schedule ids (default: ${KNOWN})`);
  addOutputFlags(status, 'schedule ids', false).action(async (ids: string[], opts: OutputOpts) => {
    const c = await ctx.temporal();
    const list = ids.length > 0 ? ids : [SCALER_SCHEDULE_ID, RECONCILER_SCHEDULE_ID];
    const all: ScheduleStatus[] = [];
    for (const id of list) all.push(await scheduleStatus(c, id));
    emit(opts, { schedules: all }, { text: () => all.map(renderSchedule).join('\n\n'), names: () => list });
  });
}

function registerScheduleActions(schedule: Command, ctx: CliContext): void {
  for (const action of ['pause', 'resume', 'trigger'] as const) {
    schedule
      .command(action)
      .description(`${action} a schedule${action === 'trigger' ? ' (run it once now)' : ''}`)
      .argument('<scheduleId>', `e.g. ${KNOWN}`)
      .action(async (id: string) => {
        const handle = (await ctx.temporal()).schedule.getHandle(id);
        await onSchedule(id, async () => {
          if (action === 'pause') await handle.pause(`paused by ${ctx.operator}`);
          else if (action === 'resume') await handle.unpause(`resumed by ${ctx.operator}`);
          else await handle.trigger();
        });
        console.log(`schedule ${id}: ${action} done`);
      });
  }
}

export function registerSchedule(program: Command, ctx: CliContext): void {
  const schedule = program.command('schedule').description('the fleet-scaler and orphan-reconciler schedules');
  registerSetup(schedule, ctx);
  registerScheduleStatus(schedule, ctx);
  registerScheduleActions(schedule, ctx);
}
