import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIM_C1_SHA256, simNetUrl } from '../../infra/sim/net.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { cancelAndWait } from '../helpers/cancel-and-wait.js';
import { expectCleanedUp, expectKilled } from '../helpers/expect-kill.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { simOffer } from '../helpers/offers.js';
import { pollUntil } from '../../infra/dev/poll.js';

// One fleet, one offer per way a host can be unfit or lack its benchmark input (2x RTX 4090, 24564 MB each).
const o = {
  fewerGpus: simOffer({ host: { machine: { gpus: 1 } } }),
  otherModel: simOffer({ host: { machine: { gpuName: 'NVIDIA GeForce RTX 3090' } } }),
  lessVram: simOffer({ host: { machine: { vramMiB: 12_288 } } }),
  brokenDriver: simOffer({ host: { machine: { driver: 'broken' } } }),
  fullDisk: simOffer({ host: { machine: { diskFreeGiB: 20 } } }),
  slowDisk: simOffer({ host: { machine: { diskWriteMBps: 2 } } }),
  slowNetwork: simOffer({ host: { machine: { downMbps: 1 } } }),
  noC1: simOffer({ host: { machine: { c1: 'absent' } } }),
  c1WrongSum: simOffer({ host: { machine: { c1: 'absent' } } }),
  c1Fetched: simOffer({ host: { machine: { c1: 'absent', downMbps: 900 } } }),
};

let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv(Object.values(o));
});
afterAll(async () => env?.close());

async function machineMarks(machineId: number) {
  const bad = await env.pool.query('SELECT reason FROM bad_machines WHERE machine_id = $1', [machineId]);
  const counted = await env.pool.query('SELECT failure_type, count FROM machine_failures WHERE machine_id = $1', [
    machineId,
  ]);
  return { bad: bad.rows as Array<{ reason: string }>, counted: counted.rows as Array<{ failure_type: string }> };
}

async function events(workflowId: string) {
  const r = await env.pool.query<{ stage: string; message: string; details: Record<string, unknown>; at: Date }>(
    'SELECT stage, message, details, at FROM lifecycle_events WHERE workflow_id = $1 ORDER BY seq',
    [workflowId],
  );
  return r.rows;
}

type Unfit = {
  unfit: string[];
  problems: Array<{ check: string; measured: unknown; required: unknown; unit: string }>;
  measured: Record<string, unknown>;
  claimed: Record<string, unknown>;
};

// Alone, first: its timing is the gate's cost on a healthy host, not on a machine busy with ten others.
describe('a healthy host', () => {
  it('fetches the absent C1 input (checksum-verified), passes the gate in seconds and goes on to paramfetch', async () => {
    const id = `t-c1fetch-${o.c1Fetched.id}`;
    const url = `${await simNetUrl()}/c1.json`;
    await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: id,
      args: [fastRequest(o.c1Fetched.id, { benchInput: { url, sha256: SIM_C1_SHA256 } })],
      workflowExecutionTimeout: '4 minutes',
    });
    const rows = await pollUntil(
      'the lifecycle to reach paramfetch',
      async () => {
        const ev = await events(id);
        const killed = ev.find((e) => e.stage === 'killing');
        if (killed) throw new Error(`killed: ${JSON.stringify(killed.details)}`);
        return ev.some((e) => e.stage === 'paramfetch') ? ev : undefined;
      },
      { timeoutMs: 90_000, isFatal: (err) => err instanceof Error && err.message.startsWith('killed') },
    );
    await cancelAndWait(env.client, id);
    const at = (pred: (e: (typeof rows)[number]) => boolean) => rows.find(pred)?.at.getTime() ?? NaN;
    const fit = rows.find((e) => e.message === 'fit');
    expect(fit?.details).toMatchObject({
      measured: { gpus: 2, gpuNames: ['NVIDIA RTX 4090'], cudaVersion: 12.4, freeDiskGiB: 1500 },
      notJudged: [],
    });
    const figures = (fit?.details.measured ?? {}) as { downloadMbps: number; diskWriteMBps: number };
    expect(figures.downloadMbps).toBeGreaterThan(4);
    expect(figures.diskWriteMBps).toBeGreaterThan(50);
    expect(rows.find((e) => e.message === 'bench input from download')?.details).toMatchObject({ source: 'download' });
    // The gate's cost on a healthy host (docs/benchmarks.md): the probes, then the bench input and the
    // hand-over to paramfetch. The host's boot is not counted: paramfetch waited for it before the gate.
    const probeMs = Number(fit?.details.probeMs);
    const gateMs = probeMs + at((e) => e.stage === 'paramfetch') - at((e) => e.message === 'fit');
    console.log(
      `fitness gate, healthy simulated host: ${(gateMs / 1000).toFixed(2)} s (probes ${(probeMs / 1000).toFixed(2)} s); ` +
        `measured download ${figures.downloadMbps} Mb/s, disk writes ${figures.diskWriteMBps} MB/s`,
    );
    expect(gateMs).toBeLessThan(30_000);
    expect(await machineMarks(o.c1Fetched.machine_id)).toEqual({ bad: [], counted: [] });
  });
});

describe.concurrent(
  'an unfit host is caught before paramfetch: typed, with evidence, destroyed, machine marked',
  () => {
    it.each([
      ['fewer GPUs than the offer', o.fewerGpus, 'gpuCount', { gpus: 1 }],
      ['another GPU model', o.otherModel, 'gpuModel', { gpuNames: ['NVIDIA GeForce RTX 3090'] }],
      ['less VRAM', o.lessVram, 'vram', { minVramMiB: 12_288 }],
      ['a broken driver', o.brokenDriver, 'driver', { gpus: 0 }],
      ['a full disk', o.fullDisk, 'diskFree', { freeDiskGiB: 20 }],
      ['a slow disk', o.slowDisk, 'diskWrite', {}],
      ['a slow network', o.slowNetwork, 'download', {}],
    ] as const)('%s', async (_name, offer, check, measured) => {
      const id = `t-unfit-${check}-${offer.id}`;
      const k = await expectKilled(env, id, fastRequest(offer.id), 'HostUnfit');
      const d = k.details as unknown as Unfit;
      expect(d.unfit).toEqual([check]);
      expect(d.measured).toMatchObject(measured);
      expect(d.claimed).toEqual({ gpuName: 'RTX 4090', numGpus: 2, gpuRamMb: 24_564 });
      expect(d.problems[0]?.unit).toBeTypeOf('string');
      expect(k.failure.message).toMatch(/HostUnfit during fitness: host unfit: /);
      if (check === 'diskWrite') expect(d.problems[0]?.measured).toBeLessThan(3);
      if (check === 'download') expect(d.problems[0]?.measured).toBeLessThan(2);
      if (check === 'driver') expect(k.failure.message).toContain("couldn't communicate with the NVIDIA driver");
      // Before paramfetch: no parameter fetch was paid for.
      expect((await events(id)).map((e) => e.stage)).not.toContain('paramfetch');
      expectCleanedUp(env, offer.id);
      const marks = await machineMarks(offer.machine_id);
      expect(marks.bad.length, 'machine marked bad').toBe(1);
      expect(marks.bad[0]?.reason).toContain('HostUnfit');
    });
  },
);

describe.concurrent('the benchmark input', () => {
  it('absent from the image and no URL configured: BenchInputMissing before warmup, the machine not marked', async () => {
    const id = `t-noc1-${o.noC1.id}`;
    const k = await expectKilled(env, id, fastRequest(o.noC1.id), 'BenchInputMissing');
    expect(k.failure.message).toMatch(/no C1 input at .*c1\.json and no benchInput\.url/);
    expect(k.details.ours).toBe(true);
    expect((await events(id)).map((e) => e.stage)).not.toContain('paramfetch');
    expectCleanedUp(env, o.noC1.id);
    expect(await machineMarks(o.noC1.machine_id)).toEqual({ bad: [], counted: [] });
  });

  it('a checksum that is not the file our URL serves is our fault: BenchInputMissing, the machine not marked', async () => {
    const id = `t-c1sum-${o.c1WrongSum.id}`;
    const url = `${await simNetUrl()}/c1.json`;
    const k = await expectKilled(
      env,
      id,
      fastRequest(o.c1WrongSum.id, { benchInput: { url, sha256: '0'.repeat(64) } }),
      'BenchInputMissing',
    );
    expect(k.details).toMatchObject({ url, sha256: SIM_C1_SHA256, expected: '0'.repeat(64) });
    expectCleanedUp(env, o.c1WrongSum.id);
    expect(await machineMarks(o.c1WrongSum.machine_id)).toEqual({ bad: [], counted: [] });
  });
});
