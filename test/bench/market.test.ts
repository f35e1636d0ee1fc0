import { describe, expect, it } from 'vitest';
import { generateMarket, simTrueRate } from '../../infra/bench/market.js';
import { MARKET_PARAMS } from '../../infra/bench/market-params.js';
import { simBilledDph } from '../../infra/sim/vast/pricing.js';

describe('market generator', () => {
  it('is deterministic for a seed and differs across seeds', () => {
    const a = generateMarket();
    const b = generateMarket();
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(generateMarket(MARKET_PARAMS, 29))).not.toBe(JSON.stringify(a));
  });

  it('has at least 200 offers with unique ids and machines, over the parameters GPU models', () => {
    const m = generateMarket();
    expect(m.length).toBeGreaterThanOrEqual(200);
    expect(new Set(m.map((x) => x.offer.id)).size).toBe(m.length);
    expect(new Set(m.map((x) => x.offer.machine_id)).size).toBe(m.length);
    const models = Object.keys(MARKET_PARAMS.gpuModels);
    for (const x of m) expect(models).toContain(x.offer.gpu_name);
    expect(new Set(m.map((x) => x.offer.gpu_name)).size).toBe(models.length);
  });

  it('prices the searched 8 GiB price and the billed price for the rented disk apart', () => {
    for (const x of generateMarket()) {
      expect(x.searchedDph).toBe(x.offer.dph_total);
      expect(x.billedDph).toBeCloseTo(simBilledDph(x.offer, 200), 9);
      expect(x.billedDph).toBeGreaterThan(x.searchedDph);
    }
  });

  it('lists offers over the day and lets others take them later', () => {
    const m = generateMarket();
    const atStart = m.filter((x) => x.listedAtH === 0).length / m.length;
    expect(atStart).toBeGreaterThan(0.45);
    expect(atStart).toBeLessThan(0.75);
    for (const x of m) {
      expect(x.listedAtH).toBeGreaterThanOrEqual(0);
      expect(x.listedAtH).toBeLessThan(24);
      expect(x.takenAtH).toBeGreaterThan(x.listedAtH);
    }
  });

  it('draws the fault mix near its stated rates and wires each to its simulator knob', () => {
    const m = generateMarket(MARKET_PARAMS, 1);
    const share = (f: string) => m.filter((x) => x.faults.includes(f)).length / m.length;
    expect(share('transportDropAfterRestart')).toBeGreaterThan(0.06);
    expect(share('transportDropAfterRestart')).toBeLessThan(0.25);
    for (const x of m) {
      const h = x.offer.sim.host;
      expect(h.faults.transportDrops).toBe(x.faults.includes('transportDropAfterRestart') ? 1 : 0);
      expect(h.faults.oomOnPceAbovePartitionWorkers !== undefined).toBe(x.faults.includes('oomOnLowRam'));
      if (x.faults.includes('oomOnLowRam')) expect(x.offer.cpu_ram).toBeLessThanOrEqual(128_000);
      expect(x.offer.sim.instance.fate !== 'running').toBe(x.faults.includes('neverRuns'));
      expect(h.faults.crashAfterProofs !== undefined).toBe(x.faults.includes('daemonCrash'));
      expect(h.faults.degradeAfterSec !== undefined).toBe(x.faults.includes('degradation'));
      expect(x.offer.sim.instance.preemptAfterSec !== undefined).toBe(x.faults.includes('preemption'));
      expect(x.fatal).toBe(
        ['neverRuns', 'paramfetchStall', 'paramfetchFail', 'daemonCrash'].some((f) => x.faults.includes(f)),
      );
    }
  });

  it("true rate follows the simulator's proving model: GPU-bound with enough concurrency, slower on low RAM", () => {
    // 1 GPU, 768 GB: concurrency 3, 16 partition workers; the GPU (0.45 x 80 s) bounds it: 100 proofs/h.
    expect(simTrueRate(80, 1, 786_432)).toBeCloseTo(100, 6);
    // 2 GPUs, 251 GB: concurrency 2, 10 workers; latency 180 s bounds it: 2 / 180 s = 40 proofs/h.
    expect(simTrueRate(180, 2, 257_024)).toBeCloseTo(40, 6);
    expect(simTrueRate(80, 1, 128_000)).toBeLessThan(simTrueRate(80, 1, 786_432));
  });
});
