import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import pg from 'pg';
import { startDevServer } from '../temporal/dev-server.js';
import { startProductionServer } from '../temporal/production-server.js';
import { log, processCpuSec, processRssMiB, RESULTS_DIR, round } from './common.js';
import { scaleBench } from './scale.js';
import { DEFAULT_MIN_RATE } from '../../workflows/domain/policy/defaults.js';

/**
 * `npx tsx infra/bench/engines.ts --n 200 [--engine production|dev|both]`: the scale bench (scale.ts) on
 * the production engine (temporal-server on PostgreSQL, docs/production-engine.md) and on the dev server
 * (start-dev, SQLite), each started here and handed to the bench as TEMPORAL_ADDRESS so that this script
 * can account the server's CPU and RSS — and, for the production engine, the CPU of the Postgres backends
 * serving its two databases, which is part of what that engine costs.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '200' },
    engine: { type: 'string', default: 'both' },
    'time-scale': { type: 'string', default: '0.7' },
    'ramp-per-sec': { type: 'string', default: '1.5' },
  },
});
const n = Number(values.n);
const timeScale = Number(values['time-scale']);
const rampPerSec = Number(values['ramp-per-sec']);
if (!Number.isInteger(n) || n < 1 || n > 5000) throw new Error(`--n: an integer 1..5000, got ${values.n}`);
if (!(timeScale > 0 && timeScale <= 1)) throw new Error(`--time-scale: in (0, 1], got ${values['time-scale']}`);
if (!(rampPerSec > 0)) throw new Error(`--ramp-per-sec: positive, got ${values['ramp-per-sec']}`);
const engines = values.engine === 'both' ? ['production', 'dev'] : [values.engine];
if (engines.some((e) => e !== 'production' && e !== 'dev'))
  throw new Error(`--engine: production, dev or both, got ${values.engine}`);

Runtime.install({ logger: new DefaultLogger('ERROR') });

const PG_ADMIN = process.env.TEMPORAL_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
const STORE_DB = 'gpufleet_bench_temporal';
const VIS_DB = 'gpufleet_bench_temporal_vis';

/** CPU seconds of the Postgres backends serving `databases`, summed over every backend seen while sampling. */
function backendCpu(admin: pg.Client, databases: string[]) {
  const last = new Map<number, number>();
  const first = new Map<number, number>();
  const sample = async () => {
    const rows = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = ANY($1)', [
      databases,
    ]);
    for (const { pid } of rows.rows) {
      const cpu = processCpuSec(pid);
      if (cpu === null) continue;
      if (!first.has(pid)) first.set(pid, cpu);
      last.set(pid, cpu);
    }
  };
  // A backend first seen mid-run counts from zero: it started during the run.
  const total = (startPids: Set<number>) =>
    [...last].reduce((s, [pid, cpu]) => s + cpu - (startPids.has(pid) ? (first.get(pid) ?? 0) : 0), 0);
  return { sample, total, pids: () => new Set(last.keys()) };
}

const results = [];
const partial = path.join(RESULTS_DIR, `partial-engines-${process.pid}.json`);
mkdirSync(path.dirname(partial), { recursive: true });
for (const engine of engines) {
  log(`engines: n=${n} on the ${engine} engine`);
  // The machine may be shared: the load around a run says how far its numbers can be trusted.
  const loadAtStart = os.loadavg()[0];
  const server =
    engine === 'production'
      ? await startProductionServer({ storeDatabase: STORE_DB, visibilityDatabase: VIS_DB, fresh: true, log })
      : await startDevServer({ headless: true });
  const pid = server.pid;
  process.env.TEMPORAL_ADDRESS = server.address;
  const admin = engine === 'production' ? new pg.Client({ connectionString: `${PG_ADMIN}/postgres` }) : null;
  await admin?.connect();
  const backends = admin ? backendCpu(admin, [STORE_DB, VIS_DB]) : null;
  await backends?.sample();
  const startPids = backends?.pids() ?? new Set<number>();
  const cpu0 = processCpuSec(pid);
  let peakRss = processRssMiB(pid) ?? 0;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, processRssMiB(pid) ?? 0);
    void backends?.sample().catch(() => undefined);
  }, 1000);
  try {
    const r = await scaleBench({
      n,
      timeScale,
      rampSec: n / rampPerSec,
      hostsPerFarm: 250,
      slowShare: 0.2,
      minRate: DEFAULT_MIN_RATE,
    });
    clearInterval(sampler);
    await backends?.sample();
    const serverCpu = cpu0 === null ? null : round((processCpuSec(pid) ?? cpu0) - cpu0, 1);
    const postgresCpu = backends ? round(backends.total(startPids), 1) : null;
    const perLifecycle = (x: number | null) => (x === null ? null : round(x / Math.max(1, r.decided), 3));
    results.push({
      engine,
      loadAvg1m: { atStart: loadAtStart, atEnd: os.loadavg()[0] },
      ...r,
      cpuSec: { ...r.cpuSec, temporal: serverCpu, temporalPostgres: postgresCpu },
      peakRssMiB: { ...r.peakRssMiB, temporal: peakRss },
      engineCpuSecPerLifecycle: perLifecycle(serverCpu === null ? null : serverCpu + (postgresCpu ?? 0)),
      serverCpuSecPerLifecycle: perLifecycle(serverCpu),
    });
    // A long run keeps what it measured so far.
    writeFileSync(partial, JSON.stringify(results, null, 2) + '\n');
  } finally {
    clearInterval(sampler);
    delete process.env.TEMPORAL_ADDRESS;
    await admin?.end();
    await server.stop();
  }
}

const result = {
  date: new Date().toISOString(),
  machine: {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    loadAvg1m: os.loadavg()[0],
  },
  results,
};
mkdirSync(RESULTS_DIR, { recursive: true });
const file = path.join(RESULTS_DIR, `full-${result.date.slice(0, 10)}-engines-n${n}-${Date.now().toString(36)}.json`);
writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
rmSync(partial, { force: true });
console.table(
  results.map((r) => ({
    engine: r.engine,
    decided: `${r.decided}/${r.n}`,
    wrong: r.wrongVerdicts.length,
    'p50 ms': r.decisionLatencyMs.p50,
    'p99 ms': r.decisionLatencyMs.p99,
    'server CPU-s': r.cpuSec.temporal,
    'Postgres CPU-s': r.cpuSec.temporalPostgres,
    'engine CPU-s/lifecycle': r.engineCpuSecPerLifecycle,
    'server RSS MiB': r.peakRssMiB.temporal,
    'wall s': r.wallSec,
  })),
);
console.log(`written ${path.relative(ROOT, file)}`);
