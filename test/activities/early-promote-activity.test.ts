import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProvingEngine } from '../../activities/gpu-host/cuzk-proto.js';
import type { BenchmarkReport } from '../../workflows/domain/types.js';
import { C1_INPUT, hostActivitiesOver, hostActivityEnv } from '../helpers/host-activities.js';

/**
 * The host's benchmark step asked for an early promote (MockActivityEnvironment, a daemon of the test's
 * own over the real proto): it stops the batch as soon as a pessimistic finish still reaches minRate and
 * hands back the evidence it decided on; a host too slow for the bound proves its whole batch.
 * What the lifecycle does with the evidence is test/logic/verdicts.test.ts.
 */

/** The total time each proof reports (the bound reads the totals); answers come after 20 ms. */
let totalMs = 100_000;
let server: grpc.Server;
let address = '';
let dir = '';

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'early-promote-'));
  await writeFile(path.join(dir, 'c1.json'), C1_INPUT);
  server = new grpc.Server();
  server.addService(loadProvingEngine().service, {
    Prove(call: grpc.ServerUnaryCall<{ submit: { request_id: string } }, unknown>, cb: grpc.sendUnaryData<unknown>) {
      // A few percent apart, as real proofs are.
      const total = Math.round(totalMs * (1 + Math.random() * 0.04));
      setTimeout(
        () =>
          cb(null, {
            result: {
              job_id: call.request.submit.request_id,
              status: 'COMPLETED',
              proof: Buffer.alloc(192, 7),
              error_message: '',
              queue_wait_ms: '0',
              srs_load_ms: '0',
              synthesis_ms: String(Math.round(total * 0.4)),
              gpu_compute_ms: String(Math.round(total * 0.6)),
              total_ms: String(total),
            },
          }),
        20,
      );
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

function prove(proofMs: number): Promise<BenchmarkReport> {
  totalMs = proofMs;
  const { acts } = hostActivitiesOver(address, dir);
  return hostActivityEnv().run<[], BenchmarkReport, () => Promise<BenchmarkReport>>(() =>
    acts.runBenchmark({
      count: 8,
      concurrency: 1,
      proofDeadlineSec: 10,
      earlyPromote: { minRate: 29, confidence: 0.95, minProofs: 3 },
    }),
  );
}

describe("the host's benchmark step with early promote", () => {
  it('stops as soon as a pessimistic finish still reaches minRate, with the evidence it decided on', async () => {
    // 100 s a proof: 8 proofs in under 15 min even at the bound, far above 29 proofs/h.
    const report = await prove(100_000);
    expect(report.completed).toBeLessThan(8);
    expect(report.promotedEarly).toMatchObject({ confidence: 0.95, requested: 8, minRate: 29 });
    expect(report.promotedEarly?.completed).toBe(report.completed);
    expect(report.promotedEarly?.rateLowerBound).toBeGreaterThanOrEqual(29);
    expect(report.timings).toHaveLength(report.completed);
  });

  it('proves the whole batch for a host whose bound does not reach minRate', async () => {
    // 1,000 s a proof: even one proof left at the bound makes 8 in over 1,000 s, under 29 proofs/h.
    const report = await prove(1_000_000);
    expect(report.completed).toBe(8);
    expect(report.promotedEarly).toBeUndefined();
  });
});
