import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { ApplicationFailure } from '@temporalio/common';
import type { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { createGpuHostActivities } from '../../activities/gpu-host/activities.js';
import { type BenchmarkInput } from '../../activities/gpu-host/activities.js';
import { loadProvingEngine } from '../../activities/gpu-host/cuzk-proto.js';
import { FailureType } from '../../workflows/domain/failures.js';
import type { BenchmarkReport } from '../../workflows/domain/types.js';
import { waitUntil } from '../../infra/dev/poll.js';
import { C1_INPUT, hostActivitiesOver, hostActivityEnv } from '../helpers/host-activities.js';

/**
 * The host's benchmark step as an activity, in-process: MockActivityEnvironment gives it a context
 * (heartbeats, cancellation), and a daemon of the test's own answers Prove on port 0 over the real
 * proto. What each proof reports and how long it takes is the test's to set.
 */

interface ProofPlan {
  /** Wall-clock delay before the answer. */
  delayMs: number;
  /** The GPU-compute time the daemon reports (early stop's GPU ceiling reads it). */
  gpuMs: number;
  status?: 'COMPLETED' | 'FAILED';
}

let plan: (index: number) => ProofPlan = () => ({ delayMs: 20, gpuMs: 60_000 });
let proofs = 0;
let server: grpc.Server;
let address = '';
let dir = '';

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'bench-activity-'));
  await writeFile(path.join(dir, 'c1.json'), C1_INPUT);
  server = new grpc.Server();
  server.addService(loadProvingEngine().service, {
    Prove(call: grpc.ServerUnaryCall<{ submit: { request_id: string } }, unknown>, cb: grpc.sendUnaryData<unknown>) {
      const p = plan(proofs++);
      setTimeout(() => {
        const status = p.status ?? 'COMPLETED';
        cb(null, {
          result: {
            job_id: call.request.submit.request_id,
            status,
            proof: Buffer.alloc(status === 'COMPLETED' ? 192 : 0, 7),
            error_message: status === 'COMPLETED' ? '' : 'synthesis failed: constraint not satisfied',
            queue_wait_ms: '0',
            srs_load_ms: '0',
            synthesis_ms: String(p.gpuMs),
            gpu_compute_ms: String(p.gpuMs),
            total_ms: String(2 * p.gpuMs),
          },
        });
      }, p.delayMs);
    },
    GetStatus(_call: unknown, cb: grpc.sendUnaryData<unknown>) {
      cb(null, { gpus: [], total_proofs_completed: String(proofs), total_proofs_failed: '0', uptime_seconds: '1' });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  address = `127.0.0.1:${port}`;
});

afterAll(async () => {
  server?.forceShutdown();
  await rm(dir, { recursive: true, force: true });
});

type HostActivities = ReturnType<typeof createGpuHostActivities>;

/** Runs the benchmark step in `env`'s activity context. */
const prove = (env: MockActivityEnvironment, acts: HostActivities, input: BenchmarkInput) =>
  env.run<[], BenchmarkReport, () => Promise<BenchmarkReport>>(() => acts.runBenchmark(input));

/** Fresh host activities over the test's daemon; `stops` counts the supervisor's stop calls. */
function hostActivities() {
  const { acts, supervisor } = hostActivitiesOver(address, dir);
  return { acts, stops: () => vi.mocked(supervisor.stop).mock.calls.length };
}

describe("the host's benchmark step", () => {
  it('proves the whole batch, heartbeating its progress after every proof', async () => {
    plan = () => ({ delayMs: 20, gpuMs: 60_000 });
    const { acts } = hostActivities();
    const env = hostActivityEnv();
    const beats: Array<{ completed: number; requested: number }> = [];
    env.on('heartbeat', (d: { completed: number; requested: number }) => beats.push(d));
    const report = await prove(env, acts, { count: 6, concurrency: 2, proofDeadlineSec: 10 });
    expect(report).toMatchObject({ requested: 6, completed: 6, concurrency: 2, deadlineReached: false });
    expect(report.gaveUp).toBeUndefined();
    expect(report.timings.map((t) => t.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(beats.filter((b) => b.requested === 6).map((b) => b.completed)).toEqual(
      expect.arrayContaining([1, 2, 3, 4, 5, 6]),
    );
  });

  it('stops the daemon when the workflow cancels (its timer fired) and hands back the partial batch', async () => {
    plan = () => ({ delayMs: 300, gpuMs: 60_000 });
    const { acts, stops } = hostActivities();
    const env = hostActivityEnv();
    let completed = 0;
    env.on('heartbeat', (d: { completed?: number }) => (completed = Math.max(completed, d.completed ?? 0)));
    const running = prove(env, acts, { count: 12, concurrency: 1, proofDeadlineSec: 10 });
    // Cancelled with a proof done and the batch unfinished: the partial batch is what it hands back.
    await waitUntil('a proof done', () => completed >= 1, { timeoutMs: 10_000, intervalMs: 20 });
    env.cancel('CANCELLED');
    const report = await running;
    expect(report.deadlineReached).toBe(true);
    expect(report.completed).toBeGreaterThanOrEqual(1);
    expect(report.completed).toBeLessThan(12);
    expect(stops()).toBe(1);
  });

  it('gives up as soon as its GPUs cannot reach minRate, returning the evidence it decided on', async () => {
    // 6 min of GPU time per proof on 1 GPU: at most 10 proofs/h, far under 29.
    plan = () => ({ delayMs: 20, gpuMs: 360_000 });
    const { acts, stops } = hostActivities();
    const env = hostActivityEnv();
    const report = await prove(env, acts, {
      count: 12,
      concurrency: 1,
      proofDeadlineSec: 10,
      earlyStop: { minRate: 29, minProofs: 3, gpus: 1 },
    });
    expect(report.completed).toBe(1);
    expect(report.deadlineReached).toBe(false);
    expect(report.gaveUp).toEqual({
      bound: 'gpu-ceiling',
      bestRate: 10,
      gpuCeilingRate: 10,
      gpus: 1,
      completed: 1,
      requested: 12,
    });
    expect(stops()).toBe(1);
  });

  it('keeps proving a host whose GPUs can reach minRate', async () => {
    // 1 min of GPU time on 1 GPU: a 60 proofs/h ceiling; the pace bound is wall-clock and fast here.
    plan = () => ({ delayMs: 20, gpuMs: 60_000 });
    const { acts, stops } = hostActivities();
    const report = await prove(hostActivityEnv(), acts, {
      count: 4,
      concurrency: 1,
      proofDeadlineSec: 10,
      earlyStop: { minRate: 29, minProofs: 2, gpus: 1 },
    });
    expect(report).toMatchObject({ completed: 4, deadlineReached: false });
    expect(report.gaveUp).toBeUndefined();
    expect(stops()).toBe(0);
  });

  it("a proof the daemon reports FAILED ends the step as ProofFailed, with the daemon's own error as evidence", async () => {
    plan = (i) => ({ delayMs: 20, gpuMs: 60_000, status: i === 2 ? 'FAILED' : 'COMPLETED' });
    proofs = 0;
    const { acts } = hostActivities();
    const err = await prove(hostActivityEnv(), acts, { count: 6, concurrency: 1, proofDeadlineSec: 10 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    const f = err as ApplicationFailure;
    expect(f.type).toBe(FailureType.ProofFailed);
    expect(f.message).toContain('constraint not satisfied');
    expect(f.details?.[0]).toMatchObject({
      status: 'FAILED',
      errorMessage: 'synthesis failed: constraint not satisfied',
    });
  });
});
