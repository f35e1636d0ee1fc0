import type { Client } from '@temporalio/client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { MachineRecord } from '../../activities/store/queries.js';
import { offers } from '../../workers/cli/commands/offers.js';
import type { CliContext } from '../../workers/cli/context.js';
import type { OutputOpts } from '../../workers/cli/output-format.js';
import { type LeftOutOffer, offerPreview } from '../../workflows/domain/policy/scaler-ranking.js';
import type { OfferReport } from '../../workflows/fleet-admin.js';
import { offerOn } from '../helpers/store-rentals.js';

/**
 * What `gpu-fleet offers` prints of the workflow's report, with the workflow answered by a fake client: the
 * scaler's ranking with its figures, and each offer the ranking left out named with why.
 */

const RAM = 768 * 1024;
const hw = (offerId: number, machineId: number, dphTotal: number) => ({
  ...offerOn(machineId),
  offerId,
  gpuName: 'RTX 5070 Ti',
  numGpus: 1,
  cpuRamMb: RAM,
  dphTotal,
});
const MIN_RATE = 29;
const mark: MachineRecord = {
  machineId: 13,
  reason: 'tester: burnt VRAM',
  source: 'operator',
  ignored: false,
  markedAt: '2026-12-06T08:00:00.000Z',
  expiresAt: null,
};

function report(): OfferReport {
  const found = [hw(1, 10, 0.2), hw(2, 11, 0.05), hw(4, 13, 0.1), hw(5, 14, 0.1)];
  const samples = [10, 11].map((machineId, i) => ({
    machineId,
    gpuName: 'RTX 5070 Ti',
    numGpus: 1,
    cpuRamMb: RAM,
    rate: [90, 12][i]!,
  }));
  const { ranked, leftOut } = offerPreview(found, [], samples, { bad: [13], resting: [14] }, MIN_RATE);
  // A kind nobody measured whose bound cannot reach minRate, as offerPreview names it.
  const unreachable: LeftOutOffer = {
    ...hw(6, 15, 0.1),
    gpuName: 'NO-SUCH-GPU',
    reason: 'under min rate',
    predictedRate: 10,
    upperRate: 20,
    source: 'unknown',
  };
  return {
    ranked,
    leftOut: [...leftOut, unreachable],
    badMachines: [13],
    excluded: [mark],
    restingMachines: [14],
    dropped: { count: 0, firstReason: null },
  };
}

async function printed(opts: OutputOpts): Promise<string> {
  const client = { workflow: { execute: async () => report() } } as unknown as Client;
  const ctx = { temporal: async () => client, taskQueue: 'q' } as unknown as CliContext;
  const lines: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
  await offers(ctx, { ...opts, minRate: MIN_RATE });
  return lines.join('\n');
}

afterEach(() => vi.restoreAllMocks());

describe('gpu-fleet offers', () => {
  it("prints the scaler's ranking with predicted proofs/h, bound, score and source, and names what it left out", async () => {
    const out = await printed({});
    const [table = '', tail = ''] = out.split(/^offers on /m);
    expect(table).toMatch(/^\s*1\s.*\$0\.200\/h\s+90 proofs\/h\s+[\d.]+ proofs\/h\s+[\d.]+ proofs\/\$\s+machine$/m);
    for (const id of [2, 4, 5]) expect(table).not.toMatch(new RegExp(`^\\s*${id}\\s`, 'm'));
    expect(tail).toContain('machine 13: tester: burnt VRAM (marked by operator, ');
    expect(tail).toMatch(/machine 13: .*; offer\(s\) 4$/m);
    expect(tail).toMatch(/^ {2}offer 5 \(machine 14, .*\): its machine rests after a recent inconclusive verdict$/m);
    expect(tail).toMatch(/^ {2}offer 2 \(machine 11, .*\): its own benchmark, 12 proofs\/h, is under --min-rate 29$/m);
    expect(tail).toMatch(
      /^ {2}offer 6 \(machine 15, .*\): under --min-rate 29 even at its bound \(predicted 10 proofs\/h, bound 20 proofs\/h, from unknown\)$/m,
    );
  });

  it('keeps -o json, wide and name', async () => {
    const json = JSON.parse(await printed({ output: 'json' })) as {
      offers: Array<{ offerId: number; upperProofsPerHour: number; score: number; source: string }>;
      leftOut: Array<{ offerId: number; reason: string }>;
    };
    expect(json.offers.map((o) => [o.offerId, o.source])).toEqual([[1, 'machine']]);
    expect(json.leftOut.map((o) => [o.offerId, o.reason])).toEqual([
      [2, 'under min rate'],
      [4, 'bad'],
      [5, 'resting'],
      [6, 'under min rate'],
    ]);
    expect(await printed({ output: 'wide' })).toMatch(/search quoted/);
    expect(await printed({ output: 'name' })).toBe('1');
  });
});
