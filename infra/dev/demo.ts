import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Client, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { CatalogueSchema } from '../sim/scenario.js';
import { freePort } from '../temporal/dev-server.js';
import type { FleetScalerInput, FleetScalerResult } from '../../workflows/fleet-scaler.js';
import { type fleetScaler, instanceLifecycle } from '../../workflows/index.js';
import type { LifecycleRequest } from '../../workflows/domain/types.js';
import { CONTROL_TASK_QUEUE, lifecycleWorkflowId } from '../../workflows/domain/task-queues.js';
import { lifecycleStatusQuery } from '../../workflows/index.js';
import { clockOf } from '../../workflows/domain/policy/clock.js';
import { type CostFigures, formatUsd } from '../../workflows/domain/policy/cost.js';
import { fmtDph, fmtGb, fmtRate, table } from '../../workers/cli/format.js';
import { exportHistory } from '../../workers/cli/history.js';
import { scrubHistoryFile } from './history-fixture.js';
import { waitForVerdict } from './verdict.js';
import {
  DEFAULT_SCHEDULE_INTERVAL_SEC,
  ensureReconcilerSchedule,
  ensureScalerSchedule,
  RECONCILER_SCHEDULE_ID,
  SCALER_SCHEDULE_ID,
} from '../../workers/setup/schedules.js';
import { compressedLifecycle, type SimStack, startSimStack } from './sim-stack.js';
import { DEFAULT_MIN_RATE } from '../../workflows/domain/policy/defaults.js';
import { DEFAULT_OFFER_FILTER } from '../../workflows/domain/policy/offer-filter.js';
import { pollUntil } from './poll.js';
import { prometheusOptions } from '../../workers/setup/runtime.js';

/**
 * `npm run demo`: a simulated fleet on embedded defaults. Starts a Temporal dev server with its UI, an
 * embedded Postgres (unless DATABASE_URL is set), the Vast.ai simulator, the control worker, and one
 * lifecycle per simulated offer, with time compressed by SIM_TIME_SCALE (default 100x).
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
process.env.SIM_TIME_SCALE ??= '0.01';
const scale = Number(process.env.SIM_TIME_SCALE);
const keepOpen = !process.argv.includes('--exit');
// `--record <dir>`: save each lifecycle's history there, named by outcome (feeds test/replay/histories).
const recordIdx = process.argv.indexOf('--record');
const recordDir = recordIdx > 0 ? process.argv[recordIdx + 1] : undefined;
// `--metrics <host:port>`: where the control worker's /metrics listens (default 127.0.0.1:9464, or a free port).
const metricsIdx = process.argv.indexOf('--metrics');
const metricsBind = metricsIdx > 0 ? process.argv[metricsIdx + 1] : undefined;
const catalogueFile = process.env.DEMO_CATALOGUE ?? path.join(ROOT, 'infra/sim/scenarios/demo.json');

async function portOr(preferred: number): Promise<number> {
  const free = await freePort();
  return (await isFree(preferred)) ? preferred : free;
}

async function isFree(port: number): Promise<boolean> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

const say = (msg: string) => console.log(`[demo] ${msg}`);

/**
 * Ctrl-C and SIGTERM stop everything the demo started — simulated hosts, worker, Postgres, Temporal —
 * once, and exit without a stack trace. The SDK's own signal handling is off (shutdownSignals: []) so
 * the worker is not shut down twice from two places.
 */
let stack: SimStack | null = null;
let stopping: Promise<void> | null = null;
function stopAll(why: string): Promise<void> {
  stopping ??= (async () => {
    say(`${why}: stopping the simulated hosts, the worker, Postgres and Temporal…`);
    if (stack) {
      // Hosts first: killing them needs nothing else to answer (the kill is synchronous).
      await stack.vast.close();
      // On an external server (TEMPORAL_ADDRESS) the schedules would go on renting; the demo's own
      // server may already be gone, so the pause gets a few seconds, not forever.
      const client = stack.client;
      await Promise.race([
        Promise.all(
          [SCALER_SCHEDULE_ID, RECONCILER_SCHEDULE_ID].map((id) =>
            client.schedule
              .getHandle(id)
              .pause('demo stopping')
              .catch(() => undefined),
          ),
        ),
        new Promise((r) => setTimeout(r, 3000).unref()),
      ]);
      await stack.close();
    }
    say('stopped');
  })();
  return stopping;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    void stopAll(signal === 'SIGINT' ? 'Ctrl-C' : 'SIGTERM').then(() => process.exit(0));
  });
// Calls still waiting on the server (a verdict poll's retry timer) fail once the stop closes their
// connection; during a stop that is expected, so it is one line of output, not a crash with a trace.
for (const event of ['uncaughtException', 'unhandledRejection'] as const)
  process.on(event, (err: unknown) => {
    if (stopping) {
      say(`while stopping: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    console.error(err instanceof Error ? `[demo] failed: ${err.stack ?? err.message}` : err);
    process.exit(1);
  });
// Whatever way the process ends, no simulated host outlives it (the kill is synchronous).
process.once('exit', () => void stack?.vast.close());

async function main(): Promise<void> {
  // The SDK's exporter on a loopback port; the stack serves one /metrics with the fleet's families (runtime.ts).
  const sdkBind = `127.0.0.1:${await freePort()}`;
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    // The native core's retry warnings (a server stopping under Ctrl-C) would otherwise go straight to stderr.
    telemetryOptions: {
      logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} },
      metrics: { prometheus: prometheusOptions(sdkBind) },
    },
    shutdownSignals: [],
  });
  const catalogue = CatalogueSchema.parse(JSON.parse(readFileSync(catalogueFile, 'utf8')));

  stack = await startSimStack(catalogue.offers, { port: await portOr(7233), uiPort: await portOr(8233) }, say, {
    metrics: { bind: metricsBind ?? `127.0.0.1:${await portOr(9464)}`, sdkUrl: `http://${sdkBind}/metrics` },
  });
  if (stopping) return;
  const { temporal, client, vast } = stack;
  say(`time runs ${Math.round(1 / scale)}x`);

  const minRate = DEFAULT_MIN_RATE;
  // Durations on the simulators' clock, and that clock, with which each lifecycle converts what it measures
  // to real units itself (workflows/domain/policy/clock.ts): rates and bars below are real proofs/h, as in production.
  const compressed = { ...compressedLifecycle(scale), clock: clockOf(scale) };
  // Nothing is known about these machines yet, so every offer is an exploration candidate.
  const n = catalogue.offers.length;
  const scalerInput: FleetScalerInput = {
    targetRate: 400,
    maxDph: 5,
    maxInstances: n,
    maxConcurrentBenchmarks: n,
    explorationSlots: n,
    minRate,
    offerCheckSec: 5,
    filter: {
      ...DEFAULT_OFFER_FILTER,
      gpuModels: [...new Set(catalogue.offers.map((o) => o.gpu_name))],
      // The catalogue's RTX 3060 and RTX 4080 hosts (reliability 0.90 and 0.93) are the seeds' own; the
      // production bar of 0.95 would never consider them.
      minReliability: 0.8,
    },
    // The demo's worker has no webhook: its lifecycles run no notify step.
    lifecycle: { ...compressed, notify: false },
  };
  const created = await ensureScalerSchedule(client, { intervalSec: 3600 * scale * 10, input: scalerInput });
  // As a deployment does: the reconciler destroys any instance whose lifecycle is gone (every 10 min, compressed).
  const reconcileSec = Math.max(1, Math.round(DEFAULT_SCHEDULE_INTERVAL_SEC * scale));
  const reconciler = await ensureReconcilerSchedule(client, { intervalSec: reconcileSec });
  say(
    `orphan-reconciler schedule ${reconciler} (every ${reconcileSec} s, ${DEFAULT_SCHEDULE_INTERVAL_SEC / 60} min simulated)`,
  );
  say(`fleet-scaler schedule ${created}; triggering a run now (target ${400} proofs/h, max $5/h)`);
  await client.schedule.getHandle(SCALER_SCHEDULE_ID).trigger();
  const started: Array<{ offerId: number; workflowId: string }> = await scalerRunStarted(client);
  say(`scaler started ${started.length} lifecycles: ${started.map((s) => s.offerId).join(', ')}`);
  if (recordDir) {
    // The replay fixtures want a slow host's kill too: the offers the scaler passed over (predicted too slow
    // for the bar even at their upper bound) are deployed by hand, as an operator's `gpu-fleet deploy` would.
    const passedOver = catalogue.offers.filter((o) => !started.some((s) => s.offerId === o.id)).map((o) => o.id);
    started.push(...(await deployByHand(client, passedOver, { ...compressed, notify: false, minRate })));
    say(`deployed by hand for the recording: ${passedOver.join(', ') || 'none'}`);
  }

  const clip = (text: string, n: number) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);
  const verdict = <
    T extends { offer: { id: number }; outcome: string; type: string; rate: number | null; reason: string },
  >(
    r: T,
  ): T => {
    const rate = r.rate === null ? '' : ` at ${Math.round(r.rate * 10) / 10} proofs/h`;
    say(`verdict: offer ${r.offer.id} ${r.outcome}${r.type ? ` (${r.type})` : ''}${rate}: ${clip(r.reason, 100)}`);
    return r;
  };
  say('waiting for verdicts (each is printed as it arrives)…');
  const rows = await Promise.all(
    started.map(async ({ offerId, workflowId }) => verdict(await outcomeOf(offerId, workflowId))),
  );
  async function outcomeOf(offerId: number, workflowId: string) {
    const offer = catalogue.offers.find((o) => o.id === offerId)!;
    const handle = client.workflow.getHandle(workflowId);
    if ((await waitForVerdict(client, workflowId, 600_000)) === 'promoted') {
      const st = await handle.query(lifecycleStatusQuery);
      return {
        offer,
        workflowId,
        outcome: 'promoted',
        type: '',
        rate: st.rate,
        cost: st.cost ?? null,
        reason: `${st.rate} proofs/h >= ${minRate}`,
      };
    }
    try {
      await handle.result();
      return { offer, workflowId, outcome: 'closed', type: '', rate: null, cost: null, reason: '' };
    } catch (err) {
      const cause = err instanceof WorkflowFailedError ? err.cause : err;
      const type = cause instanceof ApplicationFailure ? (cause.type ?? '') : 'error';
      const d =
        cause instanceof ApplicationFailure
          ? (cause.details?.[0] as { rate?: number; cost?: CostFigures | null } | undefined)
          : undefined;
      return {
        offer,
        workflowId,
        outcome: 'killed',
        type,
        rate: d?.rate ?? null,
        cost: d?.cost ?? null,
        // The message leads with its type ("DaemonCrashed during benchmark: …"); the line already names it.
        reason: (cause instanceof Error ? cause.message : String(cause)).replace(`${type} `, ''),
      };
    }
  }

  console.log('\nOutcomes (real units: proofs per real hour, GPU-$ at the billed price up to the verdict):\n');
  console.log(
    table(
      rows.map((r) => ({
        offer: r.offer.id,
        gpu: `${r.offer.num_gpus}x ${r.offer.gpu_name}`,
        machine: r.offer.machine_id,
        RAM: fmtGb(r.offer.cpu_ram),
        // Billed $/h (storage for the 200 GB disk included), as Vast reports it on the instance.
        'billed price': fmtDph(vast.ledger().find((i) => i.offerId === r.offer.id)?.dph),
        outcome: r.outcome,
        'failure type': r.type || '-',
        rate: r.rate === null ? '-' : fmtRate(r.rate),
        cost: r.cost ? formatUsd(r.cost.totalUsd) : '-',
        reason: clip(r.reason, 90),
      })),
    ),
  );
  if (recordDir) {
    mkdirSync(recordDir, { recursive: true });
    for (const row of rows) {
      const file = path.join(
        recordDir,
        `${row.outcome === 'promoted' ? 'promoted' : `killed-${row.type}`}-${row.offer.id}.json`,
      );
      const events = await exportHistory(client, row.workflowId, file);
      await scrubHistoryFile(file);
      say(`recorded ${events} events of ${row.workflowId} to ${file}`);
    }
  }
  const ui = temporal.uiUrl;
  if (ui) {
    console.log(`\nTemporal UI: ${ui}/namespaces/${temporal.namespace}/workflows`);
    console.log(
      `Killed ones:  ${ui}/namespaces/${temporal.namespace}/workflows?query=${encodeURIComponent('Outcome="killed"')}`,
    );
  }
  // The control worker's one /metrics, as production serves it: point a Prometheus at it (docs/observability.md).
  if (stack.metricsUrl)
    console.log(`Metrics:      ${stack.metricsUrl} (Prometheus text; dashboard and alerts in infra/observability)`);
  console.log(
    // The store's reads (report, machines, logs) need its URL; printed only for the embedded one, since a
    // user's own DATABASE_URL may carry a password.
    `\nOperator CLI against this demo:\n  export TEMPORAL_ADDRESS=${temporal.address}${ui ? ` TEMPORAL_UI_URL=${ui}` : ''}${stack.embeddedDb ? ` DATABASE_URL=${stack.databaseUrl}` : ''}\n  npx gpu-fleet fleet status\n  npx gpu-fleet report --by gpu`,
  );
  const leaked = vast
    .ledger()
    .filter((l) => !l.destroyed && !rows.some((r) => r.outcome === 'promoted' && r.offer.id === l.offerId));
  console.log(
    `\nInstances still rented: ${vast.ledger().filter((l) => !l.destroyed).length} (promoted ones); leaked: ${leaked.length}`,
  );

  if (leaked.length > 0) process.exitCode = 1;
  if (keepOpen && ui) {
    console.log('\nThe UI stays up until you press Ctrl-C.');
    return; // the signal handler stops everything
  }
  await stopAll('done');
}

/** The lifecycles the first scaler run started, read from its result. */
/** Lifecycles started as `gpu-fleet deploy` starts them, one per offer. */
async function deployByHand(
  client: Client,
  offerIds: number[],
  request: Omit<LifecycleRequest, 'offerId'>,
): Promise<Array<{ offerId: number; workflowId: string }>> {
  return Promise.all(
    offerIds.map(async (offerId) => {
      const workflowId = lifecycleWorkflowId(offerId);
      await client.workflow.start(instanceLifecycle, {
        taskQueue: CONTROL_TASK_QUEUE,
        workflowId,
        args: [{ ...request, offerId }],
      });
      return { offerId, workflowId };
    }),
  );
}

async function scalerRunStarted(client: Client): Promise<FleetScalerResult['started']> {
  const run = await pollUntil(
    'the fleet-scaler schedule to start a run',
    async () => (await client.schedule.getHandle(SCALER_SCHEDULE_ID).describe()).info.recentActions[0]?.action.workflow,
    { timeoutMs: 120_000, intervalMs: 200, isFatal: () => true },
  );
  const result = await client.workflow.getHandle<typeof fleetScaler>(run.workflowId, run.firstExecutionRunId).result();
  return result.started;
}

main().catch(async (err: unknown) => {
  // A stop in progress makes waiting calls fail; that is the stop, not an error to show.
  if (stopping) return;
  console.error(err instanceof Error ? `[demo] failed: ${err.message}` : err);
  await stopAll('failed');
  process.exit(1);
});
