import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Client, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { CatalogueSchema } from '../infra/sim/scenario.js';
import { freePort } from '../infra/temporal/dev-server.js';
import type { FleetScalerInput, FleetScalerResult } from '../workflows/fleet-scaler.js';
import type { fleetScaler } from '../workflows/index.js';
import { lifecycleStatusQuery } from '../workflows/index.js';
import { exportHistory } from './cli/history.js';
import { waitForVerdict } from './cli/verdict.js';
import { ensureScalerSchedule, SCALER_SCHEDULE_ID } from './schedules.js';
import { compressedLifecycle, startSimStack } from './sim-stack.js';

/**
 * `npm run demo`: a simulated fleet on embedded defaults. Starts a Temporal dev server with its UI, an
 * embedded Postgres (unless DATABASE_URL is set), the Vast.ai simulator, the control worker, and one
 * lifecycle per simulated offer, with time compressed by SIM_TIME_SCALE (default 100x).
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.env.SIM_TIME_SCALE ??= '0.01';
const scale = Number(process.env.SIM_TIME_SCALE);
const keepOpen = !process.argv.includes('--exit');
// `--record <dir>`: save each lifecycle's history there, named by outcome (feeds test/replay/histories).
const recordIdx = process.argv.indexOf('--record');
const recordDir = recordIdx > 0 ? process.argv[recordIdx + 1] : undefined;
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

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const say = (msg: string) => console.log(`[demo] ${msg}`);
  const catalogue = CatalogueSchema.parse(JSON.parse(readFileSync(catalogueFile, 'utf8')));

  const stack = await startSimStack(catalogue.offers, { port: await portOr(7233), uiPort: await portOr(8233) }, say);
  const { temporal, client, vast } = stack;
  say(`time runs ${Math.round(1 / scale)}x`);

  const minRate = 29;
  const compressed = compressedLifecycle(scale);
  // Nothing is known about these machines yet, so every offer is an exploration candidate.
  const n = catalogue.offers.length;
  const scalerInput: FleetScalerInput = {
    targetRate: 400 / scale,
    maxDph: 5,
    maxInstances: n,
    maxConcurrentBenchmarks: n,
    explorationSlots: n,
    minRate: minRate / scale,
    offerCheckSec: 5,
    filter: {
      gpuModels: [...new Set(catalogue.offers.map((o) => o.gpu_name))],
      minRamMb: 64_000,
      minReliability: 0.8,
      minCuda: 12,
      maxOfferDph: 2,
    },
    lifecycle: compressed,
  };
  const created = await ensureScalerSchedule(client, { intervalSec: 3600 * scale * 10, input: scalerInput });
  say(`fleet-scaler schedule ${created}; triggering a run now (target ${400} proofs/h, max $5/h)`);
  await client.schedule.getHandle(SCALER_SCHEDULE_ID).trigger();
  const started = await scalerRunStarted(client);
  say(`scaler started ${started.length} lifecycles: ${started.map((s) => s.offerId).join(', ')}`);

  const rows = await Promise.all(
    started.map(async ({ offerId, workflowId }) => {
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
          reason: `${st.rate} proofs/h >= ${minRate / scale}`,
        };
      }
      try {
        await handle.result();
        return { offer, workflowId, outcome: 'closed', type: '', rate: null, reason: '' };
      } catch (err) {
        const cause = err instanceof WorkflowFailedError ? err.cause : err;
        const type = cause instanceof ApplicationFailure ? (cause.type ?? '') : 'error';
        const d =
          cause instanceof ApplicationFailure ? (cause.details?.[0] as { rate?: number } | undefined) : undefined;
        return {
          offer,
          workflowId,
          outcome: 'killed',
          type,
          rate: d?.rate ?? null,
          reason: cause instanceof Error ? cause.message : String(cause),
        };
      }
    }),
  );

  console.log('\nOutcomes (rates converted back to real-time proofs/hour):\n');
  console.table(
    rows.map((r) => ({
      offer: r.offer.id,
      gpu: `${r.offer.num_gpus}x ${r.offer.gpu_name}`,
      machine: r.offer.machine_id,
      'RAM GB': Math.round(r.offer.cpu_ram / 1024),
      // Billed $/h (storage for the 200 GB disk included), as Vast reports it on the instance.
      '$/h billed': stack.vast.ledger().find((i) => i.offerId === r.offer.id)?.dph.toFixed(3) ?? '',
      outcome: r.outcome,
      'failure type': r.type,
      'proofs/h': r.rate === null ? '' : Math.round(r.rate * scale * 10) / 10,
      reason: r.reason
        .replace(/\d+(\.\d+)? proofs\/h/g, (m) => `${Math.round(parseFloat(m) * scale * 10) / 10} proofs/h`)
        .replace(String(minRate / scale), String(minRate))
        .slice(0, 90),
    })),
  );
  if (recordDir) {
    for (const row of rows) {
      const file = path.join(
        recordDir,
        `${row.outcome === 'promoted' ? 'promoted' : `killed-${row.type}`}-${row.offer.id}.json`,
      );
      const events = await exportHistory(client, row.workflowId, file);
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
  const leaked = vast
    .ledger()
    .filter((l) => !l.destroyed && !rows.some((r) => r.outcome === 'promoted' && r.offer.id === l.offerId));
  console.log(
    `\nInstances still rented: ${vast.ledger().filter((l) => !l.destroyed).length} (promoted ones); leaked: ${leaked.length}`,
  );

  const shutdown = async () => {
    await client.schedule.getHandle(SCALER_SCHEDULE_ID).pause('demo stopping');
    await stack.close();
  };
  if (keepOpen && ui) {
    console.log('\nThe UI stays up until you press Ctrl-C.');
    await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
  }
  await shutdown();
  if (leaked.length > 0) process.exitCode = 1;
}

/** The lifecycles the first scaler run started, read from its result. */
async function scalerRunStarted(client: Client): Promise<FleetScalerResult['started']> {
  for (let i = 0; i < 600; i++) {
    const desc = await client.schedule.getHandle(SCALER_SCHEDULE_ID).describe();
    const run = desc.info.recentActions[0]?.action.workflow;
    if (run) {
      const result = await client.workflow
        .getHandle<typeof fleetScaler>(run.workflowId, run.firstExecutionRunId)
        .result();
      return result.started;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the fleet-scaler schedule did not start a run');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
