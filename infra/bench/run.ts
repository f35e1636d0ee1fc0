import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { CatalogueSchema } from '../sim/scenario.js';
import { log, RESULTS_DIR } from './common.js';
import { marketBench, type MarketResult, marketTable } from './market-bench.js';
import { moneyBench } from './money.js';
import { cliLatencyBench, type CliLatencyResult } from './cli-latency.js';
import { scaleBench } from './scale.js';
import { DEFAULT_MIN_RATE } from '../../workflows/domain/policy/defaults.js';
import { z } from 'zod';
import { MARKET_PARAMS } from './market-params.js';
import { policyBench, type PolicyBenchResult, printPolicyBench } from './policy-bench.js';

/**
 * `npm run bench`: measures the fleet through the real dev server, Postgres and the simulators.
 *  1. money (money.ts): the seeded demo fleet under the seeds' original policy and under early stop;
 *  2. scale (scale.ts): N concurrent lifecycles on the host farm: throughput, decision latency,
 *     history size, CPU and RSS of the control worker, the farm and the Temporal server;
 *  3. market (market-bench.ts): a seeded market day under the seeds' old policy, ours and the oracle.
 * Results: infra/bench/results/<smoke|full>-<date>.json and tables on stdout.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const USAGE = `usage: npm run bench -- [--smoke] [--only money|scale|market|policy|cli] [--n 10,100,500,1000]
  [--time-scale 0.7] [--money-time-scale 0.05] [--ramp-per-sec 1.5] [--hosts-per-farm 250]
  [--market-hours 24] [--market-time-scale 0.04] [--market-policies old,ours] [--market-seed 28]
  [--policy-hours 24] [--policy-seeds 28,1,2,3,4,7001,7002] [--policy-as-stack 0.04]
  --smoke             small and quick (CI): 3 hosts for money, n=4 for scale, 1 simulated hour of market
  --only              run one part
  --cli-runs          status runs of the cli part, built and through tsx each (default 20; full runs and
                      --only cli: it builds dist/ and starts its own dev server, too slow for --smoke)
  --n                 fleet sizes for the scale part (default 10,100,500,1000)
  --time-scale        SIM_TIME_SCALE of the scale part (default 0.7: a 100 s proof takes 70 s)
  --money-time-scale  SIM_TIME_SCALE of the money part (default 0.05)
  --ramp-per-sec      lifecycle starts per second in the scale part (default 1.5)
  --market-hours      simulated hours of the market day (default 24)
  --market-time-scale SIM_TIME_SCALE of the market part (default 0.04: 24 h in about 58 min per policy)
  --market-policies   which policies the market part runs on the real stack (default old,ours)
  --market-seed       the market's seed (default 28, market-params.ts)
  --policy-hours      simulated hours of the policy evaluator's day (default 24; --only policy, no services)
  --policy-seeds      the evaluator's seeds (default: policy-bench.ts, two of them untuned)
  --policy-as-stack   run the evaluator's lifecycles with the real-stack day's configuration at this
                      time scale (its compressed timeouts' floors, its heartbeat timeout), to check it
                      against a real-stack run
  --hosts-per-farm    simulated machines per host-farm process (default 250; 100 was measured at
                      N=1000 and did no better: README, Benchmarks)
Set DATABASE_URL to use a Postgres server instead of the embedded one.`;

const seedList = z
  .string()
  .regex(/^\d+(,\d+)*$/, 'comma-separated non-negative integers')
  .transform((s) => [...new Set(s.split(',').map(Number))]);

/** The flags added with the policy evaluator, checked at the boundary. */
const ExtraFlagsSchema = z.object({
  marketPolicies: z
    .string()
    .transform((s) => s.split(','))
    .pipe(z.array(z.enum(['old', 'ours'])).min(1)),
  marketSeed: z.coerce.number().int().nonnegative(),
  policyHours: z.coerce.number().positive().max(24),
  policySeeds: seedList.optional(),
  policyAsStack: z.coerce.number().positive().max(1).optional(),
});

const FLAG_NAMES: Record<string, string> = {
  marketPolicies: 'market-policies',
  marketSeed: 'market-seed',
  policyHours: 'policy-hours',
  policySeeds: 'policy-seeds',
  policyAsStack: 'policy-as-stack',
};
const flagName = (path: readonly PropertyKey[]) => FLAG_NAMES[String(path[0])] ?? String(path[0]);

function options() {
  const { values } = parseArgs({
    options: {
      smoke: { type: 'boolean', default: false },
      only: { type: 'string' },
      n: { type: 'string', default: '10,100,500,1000' },
      'time-scale': { type: 'string', default: '0.7' },
      'money-time-scale': { type: 'string', default: '0.05' },
      'ramp-per-sec': { type: 'string', default: '1.5' },
      'hosts-per-farm': { type: 'string', default: '250' },
      'market-hours': { type: 'string', default: '24' },
      'market-time-scale': { type: 'string', default: '0.04' },
      'market-policies': { type: 'string', default: 'old,ours' },
      'market-seed': { type: 'string', default: String(MARKET_PARAMS.seed) },
      'policy-hours': { type: 'string', default: '24' },
      'policy-seeds': { type: 'string' },
      'policy-as-stack': { type: 'string' },
      'cli-runs': { type: 'string', default: '20' },
      help: { type: 'boolean', default: false },
    },
  });
  const fail = (m: string): never => {
    console.error(`${m}\n${USAGE}`);
    process.exit(2);
  };
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (values.only !== undefined && !['money', 'scale', 'market', 'policy', 'cli'].includes(values.only))
    fail(`--only: money, scale, market, policy or cli, got ${values.only}`);
  const cliRuns = Number(values['cli-runs']);
  if (!(Number.isInteger(cliRuns) && cliRuns >= 1 && cliRuns <= 1000))
    fail(`--cli-runs: an integer 1..1000, got ${values['cli-runs']}`);
  const extra = ExtraFlagsSchema.safeParse({
    marketPolicies: values['market-policies'],
    marketSeed: values['market-seed'],
    policyHours: values['policy-hours'],
    policySeeds: values['policy-seeds'],
    policyAsStack: values['policy-as-stack'],
  });
  if (!extra.success) fail(extra.error.issues.map((i) => `--${flagName(i.path)}: ${i.message}`).join('\n'));
  const ns = values.n.split(',').map(Number);
  if (ns.some((n) => !Number.isInteger(n) || n < 1 || n > 5000)) fail(`--n: integers 1..5000, got ${values.n}`);
  const timeScale = Number(values['time-scale']);
  if (!(timeScale > 0 && timeScale <= 1)) fail(`--time-scale: in (0, 1], got ${values['time-scale']}`);
  const moneyTimeScale = Number(values['money-time-scale']);
  if (!(moneyTimeScale > 0 && moneyTimeScale <= 1))
    fail(`--money-time-scale: in (0, 1], got ${values['money-time-scale']}`);
  const rampPerSec = Number(values['ramp-per-sec']);
  if (!(rampPerSec > 0)) fail(`--ramp-per-sec: positive, got ${values['ramp-per-sec']}`);
  const hostsPerFarm = Number(values['hosts-per-farm']);
  if (!(Number.isInteger(hostsPerFarm) && hostsPerFarm >= 1))
    fail(`--hosts-per-farm: a positive integer, got ${values['hosts-per-farm']}`);
  const marketHours = Number(values['market-hours']);
  if (!(marketHours > 0 && marketHours <= 24)) fail(`--market-hours: in (0, 24], got ${values['market-hours']}`);
  const marketTimeScale = Number(values['market-time-scale']);
  if (!(marketTimeScale > 0 && marketTimeScale <= 1))
    fail(`--market-time-scale: in (0, 1], got ${values['market-time-scale']}`);
  return {
    smoke: values.smoke,
    money: values.only === undefined || values.only === 'money',
    scale: values.only === undefined || values.only === 'scale',
    market: values.only === undefined || values.only === 'market',
    policy: values.only === undefined || values.only === 'policy',
    cli: values.only === 'cli' || (values.only === undefined && !values.smoke),
    cliRuns,
    ...extra.data!,
    marketHours: values.smoke ? 1 : marketHours,
    marketTimeScale: values.smoke ? 0.01 : marketTimeScale,
    ns: values.smoke ? [4] : ns,
    timeScale: values.smoke ? 0.05 : timeScale,
    moneyTimeScale: values.smoke ? 0.02 : moneyTimeScale,
    rampPerSec,
    hostsPerFarm,
  };
}

type Options = ReturnType<typeof options>;
type Parts = Awaited<ReturnType<typeof runParts>>;

async function main() {
  const opt = options();
  const loadAtStart = os.loadavg().map((x) => Math.round(x * 100) / 100);
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const parts = await runParts(opt);
  const result = {
    date: new Date().toISOString(),
    machine: {
      // The load the run shared the machine with (1, 5, 15 min), at its start and its end.
      loadAverage: { start: loadAtStart, end: os.loadavg().map((x) => Math.round(x * 100) / 100) },
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      memGiB: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      postgres: process.env.DATABASE_URL ? 'server (DATABASE_URL)' : 'embedded PGlite',
    },
    smoke: opt.smoke,
    ...parts,
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const base = path.join(RESULTS_DIR, `${opt.smoke ? 'smoke' : 'full'}-${result.date.slice(0, 10)}${filePart(opt)}`);
  const file = opt.smoke ? `${base}.json` : unusedName(base);
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  printResults(parts);
  console.log(`\nwritten to ${path.relative(ROOT, file)}`);
  if (failed(parts)) process.exitCode = 1;
}

/** Runs the parts the options ask for, one after the other. */
async function runParts(opt: Options) {
  let money = null;
  if (opt.money) {
    const catalogue = CatalogueSchema.parse(
      JSON.parse(readFileSync(path.join(ROOT, 'infra/sim/scenarios/demo.json'), 'utf8')),
    );
    // Smoke: one healthy, one too slow, one crashing host.
    const fleet = opt.smoke
      ? catalogue.offers.filter((o) => [32740552, 32709911, 32733029].includes(o.id))
      : catalogue.offers;
    money = await moneyBench(fleet, opt.moneyTimeScale);
  }
  const scale = opt.scale ? await runScale(opt) : [];
  let market: MarketResult | null = null;
  if (opt.market)
    market = await marketBench({
      hours: opt.marketHours,
      timeScale: opt.marketTimeScale,
      seed: opt.marketSeed,
      policies: opt.marketPolicies,
    });
  let policy: PolicyBenchResult | null = null;
  if (opt.policy)
    policy = policyBench({
      hours: opt.policyHours,
      ...(opt.policySeeds ? { seeds: opt.policySeeds } : {}),
      ...(opt.policyAsStack !== undefined ? { asStackScale: opt.policyAsStack } : {}),
    });
  const cli: CliLatencyResult | null = opt.cli ? await cliLatencyBench(opt.cliRuns) : null;
  return { money, scale, market, policy, cli };
}

async function runScale(opt: Options) {
  const scale = [];
  const partial = path.join(RESULTS_DIR, `partial-scale-${process.pid}.json`);
  mkdirSync(path.dirname(partial), { recursive: true });
  for (const n of opt.ns) {
    log(`scale: n=${n} at time scale ${opt.timeScale}`);
    scale.push(
      await scaleBench({
        n,
        timeScale: opt.timeScale,
        rampSec: n / opt.rampPerSec,
        hostsPerFarm: opt.hostsPerFarm,
        slowShare: 0.2,
        minRate: DEFAULT_MIN_RATE,
      }),
    );
    // A long run keeps what it measured so far.
    writeFileSync(partial, JSON.stringify(scale, null, 2) + '\n');
  }
  rmSync(partial, { force: true });
  return scale;
}

/** The result file's name part for a run of one part: a scale-only run names its sizes, a market run its hours. */
function filePart(opt: Options): string {
  const only = [opt.money, opt.scale, opt.market, opt.policy, opt.cli].filter(Boolean).length === 1;
  if (!only) return '';
  if (opt.cli) return '-cli';
  if (opt.money) return '-money';
  if (opt.scale) return `-scale-n${opt.ns.join('-')}`;
  if (opt.market)
    return `-market-${opt.marketHours}h${opt.marketPolicies.length === 1 ? `-${opt.marketPolicies[0]}` : ''}`;
  return opt.policyAsStack !== undefined ? `-policy-as-stack-${opt.policyHours}h` : '-policy';
}

function printResults({ money, scale, market, policy, cli }: Parts): void {
  if (cli)
    console.log(
      `\nCLI: \`gpu-fleet status <offer id>\` against a running lifecycle, ${cli.runs} processes each, ms p50 / p90 (min-max): built ${cli.distMs.p50} / ${cli.distMs.p90} (${cli.distMs.min}-${cli.distMs.max}), through tsx ${cli.tsxMs.p50} / ${cli.tsxMs.p90} (${cli.tsxMs.min}-${cli.tsxMs.max})`,
    );
  if (money) {
    console.log('\nMoney (real-time-equivalent minutes and dollars of GPU time, per host):');
    console.table(money.perHost);
    console.log(
      `GPU-$ on bad hosts: baseline ${money.badHostDollars.baseline}, early stop ${money.badHostDollars.earlyStop} (saving ${Math.round(money.savingOnBadHosts * 100)} %); healthy hosts wrongly killed: ${money.wronglyKilledHealthy.length}`,
    );
  }
  if (scale.length) printScale(scale);
  if (market) {
    console.log(
      `\nMarket (${market.hours} simulated h at time scale ${market.timeScale}, ${market.offers} offers, seed ${market.seed}; GPU-$ billed, storage included):`,
    );
    console.table(marketTable(market));
    console.log('$ per proof above the oracle, by cause:');
    console.table(market.distanceToOracle);
  }
  if (policy) printPolicyBench(policy);
}

function printScale(scale: Parts['scale']): void {
  console.log('\nScale (compressed time):');
  console.table(
    scale.map((r) => ({
      n: r.n,
      'peak open': r.peakOpenLifecycles,
      decided: r.decided,
      'wall s': r.wallSec,
      'lifecycles/s': r.lifecyclesPerSec,
      'decision p50/p99 ms': `${r.decisionLatencyMs.p50} / ${r.decisionLatencyMs.p99}`,
      'events killed (mean/max)': `${r.historyEvents.killedMean} / ${r.historyEvents.killedMax}`,
      'KiB/history': r.historyKiBMean,
      'CPU s control/farm/server': `${r.cpuSec.control} / ${r.cpuSec.farm} / ${r.cpuSec.temporal}`,
      'CPU s/lifecycle': r.cpuSecPerLifecycle,
      'peak RSS MiB control/farm/server': `${r.peakRssMiB.control} / ${r.peakRssMiB.farm} / ${r.peakRssMiB.temporal}`,
      'left running': r.instancesLeftRunning,
      'wrong verdicts': r.wrongVerdicts.reduce((a, g) => a + g.count, 0),
      'steps run again': r.redeliveredSteps,
    })),
  );
  for (const r of scale)
    for (const g of r.wrongVerdicts)
      console.log(`n=${r.n}: ${g.count} ${g.host} host(s) ${g.verdict} in ${g.stage ?? '?'}: ${g.reason ?? ''}`);
}

/** A leak or a wrong verdict fails the run; the market and the evaluator measure policies, their goals are reported. */
function failed({ money, scale, market }: Parts): boolean {
  return (
    (money !== null && (money.wronglyKilledHealthy.length > 0 || money.undecided > 0 || money.leftRunning > 0)) ||
    scale.some(
      (r) => r.decided < r.n || r.instancesLeftRunning > 0 || r.rentedTwice > 0 || r.wrongVerdicts.length > 0,
    ) ||
    // Only a leak of ours fails a market run.
    (market !== null && (market.policies.ours?.leftRunning ?? 0) > 0)
  );
}

/** A full run never overwrites a result kept from an earlier one: it takes the next free `-2`, `-3`, … name. */
function unusedName(base: string): string {
  if (!existsSync(`${base}.json`)) return `${base}.json`;
  for (let k = 2; ; k++) if (!existsSync(`${base}-${k}.json`)) return `${base}-${k}.json`;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
