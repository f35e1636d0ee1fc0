import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateMarket } from '../../infra/bench/market.js';
import { simulateBatch } from '../../infra/sim/cuzk/timing-model.js';
import { DEFAULT_CONCURRENCY } from '../../workflows/domain/policy/defaults.js';
import { planBenchmark } from '../../workflows/domain/policy/concurrency.js';
import { earlyPromoteEvidence } from '../../workflows/domain/policy/early-promote.js';
import { CONFIDENCE_LEVELS } from '../../workflows/domain/policy/student-t.js';

// Hosts of the market bench: the simulator's rate spread (GPU models, RAM, log-normal host spread, 2.5x liars).
const hosts = generateMarket().map((m) => ({
  proofSec: m.offer.sim.host.proofSec,
  gpus: m.offer.num_gpus,
  ramMb: m.offer.cpu_ram,
}));

/** Replays a batch in the simulator's timing model and applies the test after every completion. */
function run(
  host: (typeof hosts)[number],
  count: number,
  minRate: number,
  confidence: (typeof CONFIDENCE_LEVELS)[number],
) {
  const plan = planBenchmark(host.gpus, host.ramMb, DEFAULT_CONCURRENCY);
  const proofs = simulateBatch({
    ...host,
    partitionWorkers: plan.partitionWorkers,
    concurrency: plan.concurrency,
    count,
  });
  const fullSec = proofs[proofs.length - 1]!.endSec;
  const fullRate = count / (fullSec / 3600);
  for (let k = 1; k <= proofs.length; k++) {
    const e = earlyPromoteEvidence({
      totalsMs: proofs.slice(0, k).map((p) => p.totalSec * 1000),
      requested: count,
      elapsedMs: proofs[k - 1]!.endSec * 1000,
      concurrency: plan.concurrency,
      minRate,
      confidence,
      minProofs: 3,
    });
    if (e) return { fullRate, promotedAt: k, atSec: proofs[k - 1]!.endSec, fullSec };
  }
  return { fullRate, promotedAt: null, atSec: null, fullSec };
}

describe('early promote over the simulator timing model', () => {
  it('promotes no host whose full batch falls below minRate', () => {
    let promoted = 0;
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: hosts.length - 1 }),
        // minRate anywhere from well under to well over the host's own full-batch rate, edges included.
        fc.double({ min: 0.5, max: 1.5, noNaN: true }),
        fc.integer({ min: 4, max: 24 }),
        fc.constantFrom(...CONFIDENCE_LEVELS),
        (i, ratio, count, confidence) => {
          const host = hosts[i]!;
          const probe = run(host, count, Number.POSITIVE_INFINITY, confidence);
          const minRate = probe.fullRate * ratio;
          const r = run(host, count, minRate, confidence);
          if (r.promotedAt !== null) {
            promoted++;
            expect(r.fullRate).toBeGreaterThanOrEqual(minRate);
          }
        },
      ),
      { numRuns: 2000, seed: 30 },
    );
    // Not vacuous: a good share of the draws promote early.
    expect(promoted).toBeGreaterThan(200);
  });

  it('never promotes early a host whose full batch is a hair under minRate', () => {
    for (const host of hosts) {
      const probe = run(host, 12, Number.POSITIVE_INFINITY, 0.95);
      expect(run(host, 12, probe.fullRate * 1.000001, 0.95).promotedAt).toBeNull();
    }
  });
});
