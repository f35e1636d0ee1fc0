import { parseArgs, type ParseArgsConfig } from 'node:util';
import { Client, Connection, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { instanceLifecycle, machineAdmin, offerReport, promoteOverrideSignal } from '../workflows/index.js';
import { CONTROL_TASK_QUEUE, lifecycleWorkflowId } from '../workflows/task-queues.js';
import { fleetStatus } from './cli/fleet.js';
import { exportHistory } from './cli/history.js';
import { loadHistory, replayHistory } from './cli/replay.js';
import { liveStatus } from './cli/status.js';
import { ensureReconcilerSchedule, ensureScalerSchedule } from './schedules.js';
import { connectionOptions, dataConverter, TemporalSecuritySchema } from './temporal-connection.js';

const HELP = `gpu-fleet operator CLI — every command acts through Temporal (start, signal, cancel, schedules)

usage: npm run cli -- <command> [options]

  fleet status                          running lifecycles: instance, GPU, machine, stage, rate, $/h, age
  offers [--gpu M]... [--min-rate N]    current Vast offers ranked by predicted proofs/h per $ (bad machines dropped)
  deploy <offerId> [--min-rate N]       start an instance lifecycle for a Vast offer
  status <workflowId>                   live stage, deadline, rate, and the host's heartbeat progress
  kill <workflowId>                     cancel a lifecycle; its instance is destroyed and recorded
  promote <workflowId> --reason TEXT    operator override: promote at the verdict even if under minRate
  machines bad|ignore|unignore <machineId> --reason TEXT
                                        mark a machine bad, or ignore/unignore the automatic mark
  schedule setup [--target-rate N] [--max-dph N] [--max-instances N] [--max-benchmarks N]
                 [--min-rate N] [--gpu M]... [--every SEC]
                                        create or update the fleet-scaler and orphan-reconciler schedules
  schedule pause|resume|trigger <fleet-scaler|orphan-reconciler>
  history export <workflowId> <file>    write the workflow's history as JSON
  replay <workflowId | file.json>       replay a history against the current workflow code

environment: TEMPORAL_ADDRESS (default 127.0.0.1:7233), TEMPORAL_NAMESPACE (default "default"),
             CONTROL_TASK_QUEUE (default "${CONTROL_TASK_QUEUE}"), USER (recorded as the operator)`;

class UsageError extends Error {}

/** parseArgs' own complaints (unknown option, missing value) are usage errors too. */
function parseArgsOrUsage<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

let conn: Connection | null = null;
async function client(): Promise<Client> {
  const security = TemporalSecuritySchema.parse(process.env);
  conn ??= await Connection.connect(connectionOptions(process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233', security));
  return new Client({
    connection: conn,
    namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    dataConverter: dataConverter(security),
  });
}

function positiveInt(value: string | undefined, name: string): number {
  const n = Number(value);
  if (!value || !Number.isInteger(n) || n <= 0)
    throw new UsageError(`${name} must be a positive integer, got ${value ?? '(nothing)'}`);
  return n;
}

async function run(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgsOrUsage({
    args: argv,
    allowPositionals: true,
    options: {
      'min-rate': { type: 'string' },
      gpu: { type: 'string', multiple: true },
      reason: { type: 'string' },
      'target-rate': { type: 'string' },
      'max-dph': { type: 'string' },
      'max-instances': { type: 'string' },
      'max-benchmarks': { type: 'string' },
      every: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [cmd, ...rest] = positionals;
  if (values.help || !cmd) {
    console.log(HELP);
    return cmd || values.help ? 0 : 2;
  }
  const taskQueue = process.env.CONTROL_TASK_QUEUE ?? CONTROL_TASK_QUEUE;
  const operator = process.env.USER ?? 'operator';
  const needReason = () => {
    if (!values.reason) throw new UsageError('--reason is required: it is recorded with the action');
    return values.reason;
  };
  switch (cmd) {
    case 'fleet': {
      if (rest[0] !== 'status') throw new UsageError('usage: fleet status');
      const rows = await fleetStatus(await client());
      if (rows.length === 0) console.log('no running lifecycles');
      else console.table(rows);
      return 0;
    }
    case 'offers': {
      const minRate = values['min-rate'] === undefined ? 29 : Number(values['min-rate']);
      if (!(minRate >= 0)) throw new UsageError('--min-rate must be a number >= 0');
      const gpuModels = values.gpu ?? ['RTX 4090', 'RTX 3090', 'A40', 'RTX 5070 Ti', 'RTX PRO 4000'];
      const report = await (
        await client()
      ).workflow.execute(offerReport, {
        taskQueue,
        workflowId: `offer-report-${Date.now()}`,
        args: [{ filter: { gpuModels, minRamMb: 64_000, minReliability: 0.9, minCuda: 12, maxOfferDph: 5 }, minRate }],
      });
      console.table(
        [...report.known, ...report.explore].map((o) => ({
          offer: o.offerId,
          machine: o.machineId,
          gpu: `${o.numGpus}x ${o.gpuName}`,
          'RAM GB': Math.round(o.cpuRamMb / 1024),
          '$/h': o.dphTotal,
          'predicted proofs/h': o.predictedRate ?? 'unknown',
          'proofs/h per $': o.predictedRate === null ? '' : Math.round(o.score * 10) / 10,
          from: o.source,
        })),
      );
      console.log(`${report.badMachines.length} bad machine(s) excluded`);
      return 0;
    }
    case 'promote': {
      const id = rest[0] ?? '';
      if (!id) throw new UsageError('promote needs a workflow id');
      await (await client()).workflow.getHandle(id).signal(promoteOverrideSignal, { operator, reason: needReason() });
      console.log(`promote override sent to ${id}; it applies at the benchmark verdict`);
      return 0;
    }
    case 'machines': {
      const [action, idText] = rest;
      if (action !== 'bad' && action !== 'ignore' && action !== 'unignore')
        throw new UsageError('usage: machines bad|ignore|unignore <machineId> --reason TEXT');
      const machineId = positiveInt(idText, 'machineId');
      const res = await (
        await client()
      ).workflow.execute(machineAdmin, {
        taskQueue,
        workflowId: `machine-${machineId}-${action}-${Date.now()}`,
        args: [{ machineId, action, operator, reason: needReason() }],
      });
      console.log(
        res.changed
          ? `machine ${machineId}: ${action} recorded`
          : `machine ${machineId} was never marked bad; nothing to ${action}`,
      );
      return res.changed ? 0 : 1;
    }
    case 'schedule': {
      const [action, id] = rest;
      if (action === 'setup') {
        const num = (
          name: 'target-rate' | 'max-dph' | 'max-instances' | 'max-benchmarks' | 'min-rate' | 'every',
          dflt: number,
        ) => {
          const v = values[name] === undefined ? dflt : Number(values[name]);
          if (!(v >= 0) || !Number.isFinite(v))
            throw new UsageError(`--${name} must be a number >= 0, got ${values[name]}`);
          return v;
        };
        const c = await client();
        const every = num('every', 600);
        const scaler = await ensureScalerSchedule(c, {
          intervalSec: every,
          taskQueue,
          input: {
            targetRate: num('target-rate', 200),
            maxDph: num('max-dph', 5),
            maxInstances: num('max-instances', 8),
            maxConcurrentBenchmarks: num('max-benchmarks', 3),
            explorationSlots: 1,
            minRate: num('min-rate', 29),
            offerCheckSec: 120,
            filter: {
              gpuModels: values.gpu ?? ['RTX 4090', 'RTX 3090', 'A40', 'RTX 5070 Ti', 'RTX PRO 4000'],
              minRamMb: 128_000,
              minReliability: 0.95,
              minCuda: 12,
              maxOfferDph: 2,
            },
          },
        });
        const reconciler = await ensureReconcilerSchedule(c, { intervalSec: every, taskQueue });
        console.log(`fleet-scaler schedule ${scaler}, orphan-reconciler schedule ${reconciler} (every ${every} s)`);
        return 0;
      }
      if (!['pause', 'resume', 'trigger'].includes(action ?? '') || !id)
        throw new UsageError('usage: schedule pause|resume|trigger <scheduleId>');
      const handle = (await client()).schedule.getHandle(id);
      if (action === 'pause') await handle.pause(`paused by ${operator}`);
      else if (action === 'resume') await handle.unpause(`resumed by ${operator}`);
      else await handle.trigger();
      console.log(`schedule ${id}: ${action} done`);
      return 0;
    }
    case 'deploy': {
      const offerId = positiveInt(rest[0], 'offerId');
      const minRate = values['min-rate'] === undefined ? undefined : Number(values['min-rate']);
      if (minRate !== undefined && !(minRate >= 0)) throw new UsageError(`--min-rate must be a number >= 0`);
      const handle = await (
        await client()
      ).workflow
        .start(instanceLifecycle, {
          taskQueue,
          workflowId: lifecycleWorkflowId(offerId),
          args: [{ offerId, ...(minRate === undefined ? {} : { minRate }) }],
        })
        .catch((err: unknown) => {
          // The workflow id names the offer: Temporal refuses a second open lifecycle on it.
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
          throw new Error(
            `offer ${offerId} already has a running lifecycle, ${lifecycleWorkflowId(offerId)}; not renting it twice`,
          );
        });
      console.log(`started ${handle.workflowId}`);
      return 0;
    }
    case 'status': {
      const id = rest[0] ?? '';
      if (!id) throw new UsageError('status needs a workflow id');
      console.log(JSON.stringify(await liveStatus(await client(), id), null, 2));
      return 0;
    }
    case 'kill': {
      const id = rest[0] ?? '';
      if (!id) throw new UsageError('kill needs a workflow id');
      await (await client()).workflow.getHandle(id).cancel();
      console.log(
        `cancellation requested for ${id}; the lifecycle destroys its instance and records CancelledByOperator`,
      );
      return 0;
    }
    case 'history': {
      const [sub, id, file] = rest;
      if (sub !== 'export' || !id || !file) throw new UsageError('usage: history export <workflowId> <file>');
      const n = await exportHistory(await client(), id, file);
      console.log(`wrote ${n} events to ${file}`);
      return 0;
    }
    case 'replay': {
      const source = rest[0];
      if (!source) throw new UsageError('replay needs a workflow id or a history .json file');
      const { history, workflowId } = await loadHistory(source, client);
      const verdict = await replayHistory(history, workflowId);
      if (verdict.ok) {
        console.log(`replay of ${workflowId}: OK, the current workflow code reproduces the history`);
        return 0;
      }
      console.error(
        verdict.determinism
          ? `replay of ${workflowId}: NON-DETERMINISTIC — the current code would break this running workflow.\n${verdict.message}\nGuard the change with patched() (see README, "Replay a failed run").`
          : `replay of ${workflowId} failed: ${verdict.message}`,
      );
      return 1;
    }
    default:
      throw new UsageError(`unknown command ${cmd}`);
  }
}

run(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code;
  })
  .catch((err: unknown) => {
    console.error(
      err instanceof UsageError ? `error: ${err.message}\n\n${HELP}` : err instanceof Error ? err.message : err,
    );
    process.exitCode = err instanceof UsageError ? 2 : 1;
  })
  .finally(() => conn?.close());
