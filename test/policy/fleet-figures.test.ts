import { describe, expect, it } from 'vitest';
import { decidedFigures, fleetFigures, type OpenRentalRow } from '../../workflows/domain/policy/fleet-figures.js';
import { rentalKey } from '../../workflows/domain/task-queues.js';

const wid = 'instance-offer-42';
const first = rentalKey(wid, 'run-a');
const second = rentalKey(wid, 'run-b');
const row = (over: Partial<OpenRentalRow>): OpenRentalRow => ({
  rentalKey: first,
  workflowId: wid,
  outcome: null,
  benchRate: null,
  dphTotal: 0.5,
  ...over,
});

describe('fleet figures count each rental once', () => {
  it('an offer rented again: the running rental counts, the stale row of its workflow id does not', () => {
    // The first rental's lifecycle was terminated without a verdict; the second runs on the same id.
    const now = fleetFigures(
      [row({ rentalKey: first, dphTotal: 0.5 }), row({ rentalKey: second, dphTotal: 0.7 })],
      [{ workflowId: wid, rentalKey: second }],
    );
    expect(now).toEqual({ promoted: [], inFlight: [{ dph: 0.7, predictedRate: null }] });
  });

  it('a promoted rental counts its rate and price once, whether or not its lifecycle continued as new', () => {
    const now = fleetFigures(
      [row({ rentalKey: first, outcome: 'promoted', benchRate: 40, dphTotal: 0.5 })],
      [{ workflowId: wid, rentalKey: first }],
    );
    expect(now).toEqual({ promoted: [{ rate: 40, dph: 0.5 }], inFlight: [] });
  });

  it('a running lifecycle whose rental has no row yet takes a benchmark slot, even if its id has older rows', () => {
    const now = fleetFigures(
      [row({ rentalKey: first, outcome: 'promoted', benchRate: 40 })],
      [{ workflowId: wid, rentalKey: second }],
    );
    expect(now.inFlight).toEqual([{ dph: 0, predictedRate: null }]);
    expect(now.promoted).toHaveLength(1);
  });
});

describe("the figures a scaler run decided on (its result's `fleet`)", () => {
  it('sums promoted rates and every rental price, with $ per proof and the bars of the run', () => {
    const target = {
      targetRate: 400,
      maxDph: 5,
      maxInstances: 8,
      maxConcurrentBenchmarks: 3,
      explorationSlots: 1,
      minRate: 29,
    };
    const f = decidedFigures(
      {
        promoted: [
          { rate: 38.5, dph: 0.5 },
          { rate: 33.2, dph: 1.173 },
        ],
        inFlight: [{ dph: 0.44, predictedRate: null }],
      },
      target,
    );
    expect(f).toEqual({
      proofsPerHour: 71.7,
      dollarsPerHour: 2.113,
      dollarsPerProof: Math.round((2.113 / 71.7) * 1e6) / 1e6,
      promoted: 2,
      benchmarking: 1,
      targetProofsPerHour: 400,
      budgetDollarsPerHour: 5,
      minRateProofsPerHour: 29,
    });
    expect(decidedFigures({ promoted: [], inFlight: [] }, target).dollarsPerProof).toBeNull();
  });
});
