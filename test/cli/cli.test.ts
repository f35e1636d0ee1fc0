import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mapLimit } from '../../infra/dev/map-limit.js';
import { expectPromoted } from '../helpers/expect-promoted.js';
import { ensureScalerSchedule } from '../../workers/setup/schedules.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { lifecycleWorkflowId } from '../../workflows/domain/task-queues.js';
import { fastRequest, type FleetEnv, startFleetEnv, simClock } from '../helpers/fleet-env.js';
import { simOffer } from '../helpers/offers.js';

const run = promisify(execFile);
/** CLI processes started at once by the usage cases. */
const CLI_LANES = 4;
const MODEL = `CLI-GPU-${Date.now()}`;
const offer = simOffer({ gpu_name: MODEL, host: { proofSec: 100 } });
const other = simOffer({ gpu_name: MODEL, dph_total: 0.3 });
const watched = simOffer({ gpu_name: `${MODEL}-W`, host: { proofSec: 100 } });
const tmp = mkdtempSync(path.join(os.tmpdir(), 'cli-'));

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv([offer, other, watched]);
});
afterAll(async () => env?.close());

/** Runs the real CLI as an operator would, against the test server and worker queue (rates in real units). */
async function cli(
  args: string[],
  extraEnv: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'workers/cli.ts', ...args], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        // The reads (machines list, report, logs) query the store the control worker writes.
        DATABASE_URL: inject('databaseUrl'),
        CONTROL_TASK_QUEUE: env.taskQueue,
        TEMPORAL_UI_URL: 'http://ui.example:8233',
        USER: 'tester',
        ...extraEnv,
      },
    });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}
const json = <T>(r: { out: string }): T => JSON.parse(r.out) as T;

/** A human table: a header, no console.table index column, no quoted strings. */
function expectPlainTable(text: string): void {
  expect(text).not.toContain('(index)');
  expect(text).not.toMatch(/'[^']*'/);
  expect(text).not.toContain('│');
}

// Each case is a CLI process of its own (about 2 s of tsx start-up on a loaded machine): they run side by side.
describe.concurrent('operator CLI: usage and refusals (no server needed)', () => {
  it('prints help overall and per command', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    for (const c of [
      'fleet',
      'offers',
      'deploy',
      'status',
      'kill',
      'promote',
      'logs',
      'machines',
      'schedule',
      'replay',
    ])
      expect(help.out).toContain(c);
    const dep = await cli(['deploy', '--help']);
    expect(dep.code).toBe(0);
    expect(dep.out).toContain('Usage: gpu-fleet deploy [options] <offerId>');
    expect(dep.out).toContain('--min-rate <proofs/h>');
    expect(dep.out).not.toContain('schedule');
    // The package's `gpu-fleet` bin, from any directory.
    const bin = path.resolve('bin/gpu-fleet.mjs');
    const fromElsewhere = await run(process.execPath, [bin, 'kill', '--help'], { cwd: os.tmpdir() });
    expect(fromElsewhere.stdout).toContain('Usage: gpu-fleet kill [options] <lifecycle>');
    expect(fromElsewhere.stdout).toContain('--no-wait');
  });

  it('refuses bad numbers instead of reinterpreting them, naming the field and range, exit 2 with one usage', async () => {
    const cases: Array<[string[], string]> = [
      [['deploy', 'abc'], "offerId must be a whole number from 1 to 9007199254740991, got 'abc'"],
      [['deploy', '1e3'], "got '1e3'"],
      [['deploy', '99999999999999999999'], 'offerId must be a whole number from 1 to 9007199254740991'],
      [
        ['deploy', '12', '--min-rate', ''],
        "--min-rate must be a number above 0, at most 1000000 proofs/h (plain decimal), got ''",
      ],
      [['deploy', '12', '--min-rate', '1e999'], "got '1e999'"],
      [['offers', '--min-rate', '0'], '--min-rate must be a number above 0'],
      [['machines', 'bad', '-3', '--reason', 'x'], 'machineId'],
      [
        ['schedule', 'setup', '--max-dph=-1'],
        "--max-dph must be a number from 0 to 10000 $/h (plain decimal), got '-1'",
      ],
      [['schedule', 'setup', '--every', '5'], '--every must be a whole number from 10 to 604800 s'],
      [['status', 'x', '--watch', '0'], '--watch must be a whole number from 1 to 3600 s'],
      // Vast's default search filters are overridable with true, false or any.
      [['offers', '--verified', 'maybe'], "--verified must be true, false or any, got 'maybe'"],
      [['schedule', 'setup', '--external', 'no'], "--external must be true, false or any, got 'no'"],
    ];
    const results = await mapLimit(cases, CLI_LANES, ([args]) => cli(args));
    for (const [i, [args, message]] of cases.entries()) {
      const r = results[i]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toContain(message);
      expect(r.err).toMatch(/usage: gpu-fleet \S+/);
      expect(r.err.split('\n').length, 'one usage line, not the whole help').toBeLessThan(5);
    }
    const reason = await cli(['machines', 'ignore', '12']);
    expect(reason.code).toBe(2);
    expect(reason.err).toContain("required option '--reason <text>' not specified");
    expect(reason.err).toContain('usage: gpu-fleet machines ignore [options] <machineId>');
    expect((await cli(['kill', 'x', '--reason', '  '])).err).toContain('--reason must be 1 to 500 characters');
    const unknown = await cli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("unknown command 'frobnicate'");
    expect((await cli(['schedule', 'setup', '--max-dollars', '3'])).err).toContain("unknown option '--max-dollars'");
  });

  it('refuses the interruptible flags without a floor, and a bid fraction out of range, exit 2 with one usage', async () => {
    const cases: Array<[string[], string]> = [
      // The interruptible mix is off without a floor; its flags alone are refused, not ignored.
      [
        ['schedule', 'setup', '--bid-margin', '10'],
        '--bid-margin, --max-bid-fraction and --rebids need --on-demand-floor',
      ],
      [
        ['schedule', 'setup', '--on-demand-floor', '50', '--max-bid-fraction', '1.5'],
        '--max-bid-fraction must be a number above 0, at most 1',
      ],
    ];
    const results = await mapLimit(cases, CLI_LANES, ([args]) => cli(args));
    for (const [i, [args, message]] of cases.entries()) {
      const r = results[i]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toContain(message);
      expect(r.err).toMatch(/usage: gpu-fleet \S+/);
    }
  });

  it('names TEMPORAL_ADDRESS when the server cannot be reached', async () => {
    const r = await cli(['fleet', 'status'], { TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(r.code).toBe(1);
    expect(r.err).toContain('cannot reach the Temporal server at 127.0.0.1:1 (TEMPORAL_ADDRESS)');
  });

  it('refuses an empty history and a history cut in half, with a clear reason', async () => {
    const empty = path.join(tmp, 'empty.json');
    writeFileSync(empty, JSON.stringify({ events: [] }));
    const r = await cli(['replay', empty]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('the history holds no events');
    expect(r.err).not.toMatch(/at .*\.js:\d+/);
    const garbage = path.join(tmp, 'garbage.json');
    writeFileSync(garbage, '{not json');
    expect((await cli(['replay', garbage])).err).toContain('cannot read');
  });
});

describe('operator CLI, end to end through Temporal', () => {
  const id = lifecycleWorkflowId(offer.id);

  it('deploys, shows fleet status and live status, promotes by override, exports and replays', async () => {
    // A lenient bar (real proofs/h; the lifecycle runs on the simulators' clock, --time-scale) keeps the verdict
    // fast; the override still lands.
    const dep = await cli(['deploy', String(offer.id), '--min-rate', '29', '--time-scale', '0.01', '--json']);
    expect(dep.code, dep.err).toBe(0);
    const started = json<{ workflowId: string; ui: string; offer: { machineId: number } }>(dep);
    expect(started.workflowId).toBe(id);
    expect(started.ui).toBe(`http://ui.example:8233/namespaces/default/workflows/${id}`);
    expect(started.offer.machineId).toBe(offer.machine_id);
    const input = (await env.client.workflow.getHandle(id).fetchHistory()).events?.[0];
    expect(input?.workflowExecutionStartedEventAttributes).toBeTruthy();
    const again = await cli(['deploy', String(offer.id)]);
    expect(again.code).toBe(1);
    expect(again.err).toContain('already running; nothing deployed');
    // The lifecycle's list row and page carry what deploy knew: offer, GPUs, machine, price.
    const summary = await (await env.client.workflow.getHandle(id).describe()).staticSummary();
    expect(summary).toContain(`offer ${offer.id} · ${offer.num_gpus}x ${MODEL} · machine ${offer.machine_id}`);
    const accepted = await cli(['promote', id, '--reason', 'trusted host']);
    expect(accepted.code, accepted.err).toBe(0);
    expect(accepted.out).toContain(`${id} accepted the promote override`);
    await expectPromoted(env.client, id);
    // After the verdict the lifecycle answers with it, and the CLI prints the answer.
    const refused = await cli(['promote', id, '--reason', 'again']);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`${id} refused the promote override: verdict already given: promoted at`);
    const views = await cli(['views', '--machine', String(offer.machine_id)]);
    expect(views.code, views.err).toBe(0);
    expect(views.out).toContain('http://ui.example:8233/namespaces/default/workflows?query=');
    expect(views.out).toContain(`MachineId = "${offer.machine_id}"`);

    const fleet = await cli(['fleet', 'status']);
    expect(fleet.code, fleet.err).toBe(0);
    expectPlainTable(fleet.out);
    expect(fleet.out).toContain(id);
    expect(fleet.out).toContain(`${offer.num_gpus}x ${MODEL}`);
    expect(fleet.out).toMatch(/proving\s+[\d.,]+ proofs\/h/);
    expect(fleet.out).toMatch(/billing\s+\$[\d.]+\/h/);
    expect(fleet.out).toMatch(/\$\/h per proof\/h now\s+\$[\d.]+/);
    const fj = json<{
      lifecycles: Array<{ workflowId: string; stage: string; benchRateProofsPerHour: number }>;
      totals: { byStage: Record<string, number>; dollarsPerHour: number };
    }>(await cli(['fleet', 'status', '--json']));
    const mine = fj.lifecycles.find((l) => l.workflowId === id);
    expect(mine?.stage).toBe('promoted');
    // The simulator proves 100x fast; the CLI shows real proofs/h (under 100 for one 100 s-proof host).
    expect(mine?.benchRateProofsPerHour).toBeGreaterThan(0);
    expect(mine?.benchRateProofsPerHour).toBeLessThan(500);
    expect(fj.totals.byStage.promoted).toBeGreaterThanOrEqual(1);
    expect(fj.totals.dollarsPerHour).toBeGreaterThan(0);

    const status = await cli(['status', id]);
    expect(status.code, status.err).toBe(0);
    expect(status.out).toMatch(/stage\s+promoted/);
    expect(status.out).toMatch(/rate\s+[\d.,]+ proofs\/h \(benchmark\)/);
    expect(status.out).toMatch(/price\s+\$[\d.]+\/h, \$[\d.]+ per proof/);
    // Real time: at 100x a few wall seconds are minutes or hours of rental.
    expect(status.out).toMatch(/rented for\s+\d+ (s|min|h)/);
    expect(status.out).toMatch(/cost to date\s+\$\d+\.\d+ GPU-\$ \(\$\d+\.\d+ before the verdict/);
    // By its offer id, and the ids alone for a pipe (the whole id above went through visibility's prefix lookup).
    expect(await cli(['status', String(offer.id), '-o', 'name'])).toMatchObject({ code: 0, out: `${id}\n` });
    expect((await cli(['fleet', 'status', '-o', 'name'])).out.split('\n')).toContain(id);
    const sj = json<{ stage: string; instanceId: number; rentalAgeSec: number; clock: { scale: number } }>(
      await cli(['status', id, '--json']),
    );
    expect(sj.stage).toBe('promoted');
    expect(sj.instanceId).toBeGreaterThan(0);
    // The clock the lifecycle was started on, read from the lifecycle (the CLI has no clock setting of its own).
    expect(sj.clock).toEqual({ scale: 0.01 });

    const file = path.join(tmp, 'run.json');
    expect((await cli(['history', 'export', id, file])).out).toMatch(/wrote \d+ events/);
    const replay = await cli(['replay', file, '--partial']);
    expect(replay.code, replay.err).toBe(0);
    expect(replay.out.trim().split('\n')).toHaveLength(1);
    expect(replay.out).toContain('OK');
    expect(replay.err).toBe('');
    // The running workflow's export ends before it closed: without --partial it cannot be judged.
    const cut = await cli(['replay', file]);
    expect(cut.code).toBe(1);
    expect(cut.err).toContain('before the workflow closed');
  });

  it('kills with a reason and waits for the confirmed destroy; a second kill is refused; logs stay readable', async () => {
    const kill = await cli(['kill', id, '--reason', 'test over', '--json']);
    expect(kill.code, kill.err + kill.out).toBe(0);
    expect(json<{ destroy: string; execution: string }>(kill)).toMatchObject({
      destroy: 'confirmed',
      execution: 'CANCELLED',
    });
    expect(env.sim.ledger().find((l) => l.offerId === offer.id)).toMatchObject({ destroyed: true });
    const history = await env.client.workflow.getHandle(id).fetchHistory();
    expect(
      history.events?.find((e) => e.workflowExecutionCancelRequestedEventAttributes)
        ?.workflowExecutionCancelRequestedEventAttributes?.cause,
    ).toBe('tester: test over');

    const again = await cli(['kill', id, '--reason', 'again']);
    expect(again.code).toBe(1);
    expect(again.err).toContain('is already cancelled: there is nothing to kill');
    expect((await cli(['promote', id, '--reason', 'late'])).code).toBe(1);

    // A closed lifecycle: one status print, then --watch ends by itself.
    const watch = await cli(['status', id, '--watch', '1']);
    expect(watch.code, watch.err).toBe(0);
    expect(watch.out).toContain(`${id} (cancelled)`);
    // The operator's words, kept by the lifecycle (the CLI tells it who and why before the cancel).
    expect(watch.out).toMatch(/cause\s+killed by tester: test over/);

    const file = path.join(tmp, 'closed.json');
    await cli(['history', 'export', id, file]);
    expect((await cli(['replay', file])).code).toBe(0);
    const whole = JSON.parse(readFileSync(file, 'utf8')) as { events: unknown[] };
    const half = path.join(tmp, 'half.json');
    writeFileSync(half, JSON.stringify({ events: whole.events.slice(0, Math.floor(whole.events.length / 2)) }));
    const cut = await cli(['replay', half]);
    expect(cut.code).toBe(1);
    expect(cut.err).toContain('before the workflow closed');

    const logs = await cli(['logs', id, '--json']);
    expect(logs.code, logs.err).toBe(0);
    const tails = json<{ workflowId: string; tails: Array<{ source: string; text: string }> }>(logs);
    expect(tails.workflowId).toBe(id);
    const stored = await env.pool.query('SELECT source FROM log_tails WHERE workflow_id = $1', [id]);
    expect(tails.tails.map((t) => t.source).sort()).toEqual(
      stored.rows.map((r: { source: string }) => r.source).sort(),
    );
    const human = await cli(['logs', id]);
    expect(human.code).toBe(0);
    expect(human.out).toMatch(stored.rowCount ? /=== \S+ of rental \S+ \(stored / : /no log tails stored/);
    // A whole id never started: the server answers for it (visibility has nothing under it).
    const never = 'instance-offer-9007199254740991';
    expect((await cli(['logs', never])).out).toContain(`no log tails stored for ${never}`);
    const unknown = await cli(['status', never]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain(`no workflow '${never}' in namespace default`);
    // A prefix of no lifecycle is refused before anything is asked of it.
    for (const cmd of ['status', 'logs'])
      expect(await cli([cmd, 'no-such-lifecycle'])).toMatchObject({
        code: 2,
        err: expect.stringContaining("no lifecycle's workflow id starts with 'no-such-lifecycle'"),
      });
  });

  it('lists offers, marks, lists and ignores machines, and deploy warns about a bad machine', async () => {
    const offers = await cli(['offers', '--gpu', MODEL]);
    expect(offers.code, offers.err).toBe(0);
    expectPlainTable(offers.out);
    expect(offers.out).toContain(String(other.id));
    expect(offers.out).toMatch(new RegExp(`${other.id}\\s.*\\$\\d+\\.\\d{3}\\/h\\s+(unknown|[\\d.]+ proofs\\/h)`));
    const oj = json<{ offers: Array<{ offerId: number; dollarsPerHour: number }> }>(
      await cli(['offers', '--gpu', MODEL, '--json']),
    );
    expect(oj.offers.map((o) => o.offerId)).toContain(other.id);
    // Priced for the lifecycle's disk (storage included), so at least the base price.
    expect(oj.offers.find((o) => o.offerId === other.id)?.dollarsPerHour).toBeGreaterThanOrEqual(0.3);

    const bad = await cli(['machines', 'bad', String(other.machine_id), '--reason', 'burnt VRAM']);
    expect(bad.code, bad.err).toBe(0);
    const row = await env.pool.query('SELECT source, reason, ignored FROM bad_machines WHERE machine_id = $1', [
      other.machine_id,
    ]);
    expect(row.rows[0]).toMatchObject({ source: 'operator', reason: 'tester: burnt VRAM', ignored: false });
    // Its offer is left out of the table, and the machine is named with its mark.
    const without = (await cli(['offers', '--gpu', MODEL])).out;
    const [ranked = '', excluded = ''] = without.split(/^offers on /m);
    expect(ranked).not.toContain(String(other.id));
    expect(excluded).toMatch(new RegExp(`machine ${other.machine_id}: tester: burnt VRAM \\(marked by operator, `));

    const list = await cli(['machines', 'list']);
    expect(list.code, list.err).toBe(0);
    expectPlainTable(list.out);
    expect(list.out).toMatch(new RegExp(`${other.machine_id}\\s+bad\\s+operator\\s+tester: burnt VRAM`));
    expect(list.out).toContain('bad by tester at ');

    const dep = await cli(['deploy', String(other.id)]);
    expect(dep.code, dep.err).toBe(0);
    expect(dep.err).toContain(`warning: machine ${other.machine_id} is marked bad (operator`);
    expect(dep.out).toContain('Temporal UI: http://ui.example:8233/');
    const kill = await cli(['kill', lifecycleWorkflowId(other.id), '--reason', 'bad machine']);
    expect(kill.code, kill.err + kill.out).toBe(0);
    expect(kill.out).toMatch(/destroyed \(confirmed|no instance had been rented/);

    const missing = await cli(['deploy', '987654321']);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('offer 987654321 is not on the market now');

    expect((await cli(['machines', 'ignore', String(other.machine_id), '--reason', 'fixed'])).code).toBe(0);
    const lj = json<{
      machines: Array<{
        machineId: number;
        ignored: boolean;
        lastOperatorAction: { action: string; operator: string; reason: string };
      }>;
    }>(await cli(['machines', 'list', '--json']));
    expect(lj.machines.find((m) => m.machineId === other.machine_id)).toMatchObject({
      ignored: true,
      lastOperatorAction: { action: 'ignore', operator: 'tester', reason: 'fixed' },
    });
    expect((await cli(['offers', '--gpu', MODEL])).out).toContain(String(other.id));
    expect((await cli(['machines', 'unignore', String(other.machine_id), '--reason', 'again'])).code).toBe(0);
    expect((await cli(['machines', 'ignore', '999999999', '--reason', 'x'])).code).toBe(1);
  });

  // A lifecycle to promotion and a continue-as-new, then four CLI processes: past the default 120 s on a loaded machine.
  it("shows a promoted instance's age from its first run, across continue-as-new", { timeout: 300_000 }, async () => {
    const id = `cli-watch-${watched.id}`;
    const handle = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: id,
      args: [fastRequest(watched.id, { minRate: 29, watch: { intervalSec: 1, samplesPerRun: 2 } })],
      workflowExecutionTimeout: '5 minutes',
    });
    await expectPromoted(env.client, id);
    const first = await env.client.workflow.getHandle(id, handle.firstExecutionRunId).describe();
    let current = await env.client.workflow.getHandle(id).describe();
    for (let i = 0; i < 100 && current.runId === first.runId; i++) {
      await new Promise((r) => setTimeout(r, 200));
      current = await env.client.workflow.getHandle(id).describe();
    }
    expect(current.runId).not.toBe(first.runId);
    expect(current.startTime.getTime()).toBeGreaterThan(first.startTime.getTime());
    const wallSec = (Date.now() - first.startTime.getTime()) / 1000;
    const fj = json<{ lifecycles: Array<{ workflowId: string; rentalStartedAt: string; ageSec: number }> }>(
      await cli(['fleet', 'status', '--json']),
    );
    const row = fj.lifecycles.find((l) => l.workflowId === id);
    expect(row?.rentalStartedAt).toBe(first.startTime.toISOString());
    // Its age in real time, on the clock its memo carries (100x): at least 100 times the wall seconds so far.
    expect(row?.ageSec).toBeGreaterThanOrEqual(Math.floor(wallSec * 100));
    const sj = json<{ rentalStartedAt: string }>(await cli(['status', id, '--json']));
    expect(sj.rentalStartedAt).toBe(first.startTime.toISOString());

    // --watch on a running lifecycle keeps printing until stopped.
    const watch = await run(process.execPath, ['--import', 'tsx', 'workers/cli.ts', 'status', id, '--watch', '1'], {
      env: { ...process.env, TEMPORAL_ADDRESS: inject('temporalAddress') },
      timeout: 8000,
    }).catch((e: { stdout: string }) => e);
    expect(watch.stdout.split(`${id} (running)`).length - 1).toBeGreaterThanOrEqual(2);

    const kill = await cli(['kill', id, '--reason', 'test over', '--no-wait', '--json']);
    expect(kill.code, kill.err).toBe(0);
    expect(json<{ destroy: string }>(kill).destroy).toBe('requested');
    await expect(env.client.workflow.getHandle(id).result()).rejects.toThrow();
  });

  it('sets up both schedules idempotently and shows their status', async () => {
    const first = await cli([
      'schedule',
      'setup',
      '--target-rate',
      '100',
      '--max-dph',
      '3',
      '--every',
      '3600',
      '--gpu',
      MODEL,
      '--time-scale',
      '0.01',
    ]);
    expect(first.code, first.err).toBe(0);
    expect(first.out).toContain('fleet-scaler schedule created, orphan-reconciler schedule created');
    const again = await cli([
      'schedule',
      'setup',
      '--target-rate',
      '150',
      '--every',
      '1800',
      '--on-demand-floor',
      '60',
      '--time-scale',
      '0.01',
    ]);
    expect(again.out).toContain('fleet-scaler schedule updated, orphan-reconciler schedule updated');
    const desc = await env.client.schedule.getHandle('fleet-scaler').describe();
    expect(desc.policies.overlap).toBe('SKIP');
    const action = desc.action as { args?: Array<{ targetRate: number; lifecycle?: { clock?: { scale: number } } }> };
    // Real proofs/h in the schedule; its lifecycles run on the simulators' 100x clock (--time-scale) and convert.
    expect(action.args?.[0]?.targetRate).toBe(150);
    expect(action.args?.[0]?.lifecycle?.clock).toEqual({ scale: 0.01 });

    const st = await cli(['schedule', 'status']);
    expect(st.code, st.err).toBe(0);
    expect(st.out).toMatch(/target\s+150 proofs\/h/);
    expect(st.out).toMatch(/budget\s+\$5\.000\/h, at most 8 instances/);
    expect(st.out).toMatch(/every\s+30 min 00 s/);
    expect(st.out).toMatch(/capacity\s+on-demand up to 60 proofs\/h, interruptible above it: bid min_bid \+ 15 %/);
    expect(st.out).toContain('orphan-reconciler');
    const sj = json<{
      schedules: Array<{ scheduleId: string; paused: boolean; scaler: { targetProofsPerHour: number } | null }>;
    }>(await cli(['schedule', 'status', 'fleet-scaler', '--json']));
    expect(sj.schedules[0]).toMatchObject({
      scheduleId: 'fleet-scaler',
      paused: false,
      scaler: { targetProofsPerHour: 150 },
    });
    await env.client.schedule.getHandle('fleet-scaler').delete();
    await env.client.schedule.getHandle('orphan-reconciler').delete();
  });

  it('pauses, resumes and triggers schedules, shows the last run, and words a missing schedule', async () => {
    const scheduleId = `cli-schedule-${offer.id}`;
    await ensureScalerSchedule(env.client, {
      scheduleId,
      intervalSec: 3600,
      taskQueue: env.taskQueue,
      paused: false,
      input: {
        targetRate: 0,
        maxDph: 0,
        maxInstances: 0,
        maxConcurrentBenchmarks: 0,
        explorationSlots: 0,
        minRate: 1,
        offerCheckSec: 1,
        filter: { gpuModels: [MODEL], minRamMb: 1, minReliability: 0, minCuda: 0, maxOfferDph: 1 },
        lifecycle: { timeouts: fastRequest(1).timeouts, clock: simClock() },
      },
    });
    const handle = env.client.schedule.getHandle(scheduleId);
    expect((await cli(['schedule', 'pause', scheduleId])).code).toBe(0);
    expect((await handle.describe()).state.paused).toBe(true);
    expect((await cli(['schedule', 'status', scheduleId])).out).toMatch(/state\s+paused \(paused by tester\)/);
    expect((await cli(['schedule', 'resume', scheduleId])).code).toBe(0);
    expect((await handle.describe()).state.paused).toBe(false);
    expect((await cli(['schedule', 'trigger', scheduleId])).code).toBe(0);
    for (let i = 0; i < 50 && (await handle.describe()).info.recentActions.length === 0; i++)
      await new Promise((r) => setTimeout(r, 200));
    const runId = (await handle.describe()).info.recentActions[0]?.action.workflow.workflowId ?? '';
    await env.client.workflow.getHandle(runId).result();
    const st = await cli(['schedule', 'status', scheduleId]);
    expect(st.out).toMatch(/last run\s+\S+ at .*: completed, started 0 lifecycle\(s\)/);
    await handle.delete();

    const missing = await cli(['schedule', 'pause', 'no-such-schedule']);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("no schedule 'no-such-schedule' on this server");
  });
});
