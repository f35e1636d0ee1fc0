import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { instanceLifecycle } from '../workflows/index.js';
import { CONTROL_TASK_QUEUE, lifecycleWorkflowId } from '../workflows/task-queues.js';
import { exportHistory } from './cli/history.js';
import { loadHistory, replayHistory } from './cli/replay.js';
import { liveStatus } from './cli/status.js';

const HELP = `gpu-fleet operator CLI

usage: npm run cli -- <command> [options]

  deploy <offerId> [--min-rate N]       start an instance lifecycle for a Vast offer
  status <workflowId>                   live stage, instance, rate (the lifecycle's status query)
  kill <workflowId>                     cancel a lifecycle; its instance is destroyed and recorded
  history export <workflowId> <file>    write the workflow's history as JSON
  replay <workflowId | file.json>       replay a history against the current workflow code

environment: TEMPORAL_ADDRESS (default 127.0.0.1:7233), TEMPORAL_NAMESPACE (default "default")`;

class UsageError extends Error {}

let conn: Connection | null = null;
async function client(): Promise<Client> {
  conn ??= await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
  return new Client({ connection: conn, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
}

function positiveInt(value: string | undefined, name: string): number {
  const n = Number(value);
  if (!value || !Number.isInteger(n) || n <= 0)
    throw new UsageError(`${name} must be a positive integer, got ${value ?? '(nothing)'}`);
  return n;
}

async function run(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { 'min-rate': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [cmd, ...rest] = positionals;
  if (values.help || !cmd) {
    console.log(HELP);
    return cmd || values.help ? 0 : 2;
  }
  switch (cmd) {
    case 'deploy': {
      const offerId = positiveInt(rest[0], 'offerId');
      const minRate = values['min-rate'] === undefined ? undefined : Number(values['min-rate']);
      if (minRate !== undefined && !(minRate >= 0)) throw new UsageError(`--min-rate must be a number >= 0`);
      const handle = await (
        await client()
      ).workflow.start(instanceLifecycle, {
        taskQueue: CONTROL_TASK_QUEUE,
        workflowId: lifecycleWorkflowId(offerId),
        args: [{ offerId, ...(minRate === undefined ? {} : { minRate }) }],
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
