import { describe, expect, it } from 'vitest';
import { factsFromInstance, offerFacts } from '../../activities/vast/activities.js';
import { stoppingEvidence } from '../../activities/vast/instance-state.js';
import { type OfferFilter, offerQuery } from '../../workflows/domain/policy/offer-filter.js';

const filter: OfferFilter = {
  gpuModels: ['RTX 4090'],
  minRamMb: 64_000,
  minReliability: 0.9,
  minCuda: 12,
  maxOfferDph: 2,
};

describe("offer search sends vast-cli's default filters, each overridable", () => {
  it('defaults to verified=true, external=false, rentable=true, and never sends rented', () => {
    const q = offerQuery(filter, 200);
    expect(q).toMatchObject({ verified: { eq: true }, external: { eq: false }, rentable: { eq: true } });
    expect(q).not.toHaveProperty('rented');
  });
  it('takes an override, and null drops the filter (vast-cli `any`)', () => {
    const q = offerQuery({ ...filter, verified: false, external: null, rentable: null }, 200);
    expect(q.verified).toEqual({ eq: false });
    expect(q).not.toHaveProperty('external');
    expect(q).not.toHaveProperty('rentable');
  });
});

describe('RAM is the renter share of the host total, from the offer or from the instance found by label', () => {
  const row = { id: 9, machine_id: 1, host_id: 2, gpu_name: 'RTX 4090', num_gpus: 1, gpu_ram: 24564, dph_total: 0.3 };
  it('offer: cpu_ram x cpu_cores_effective / cpu_cores', () => {
    expect(offerFacts({ ...row, cpu_ram: 64393, cpu_cores: 96, cpu_cores_effective: 24 }, 200).cpuRamMb).toBe(16098);
  });
  it('instance recovered after a lost create answer: the same share, not the host total', () => {
    const inst = { id: 5, machine_id: 1, cpu_ram: 64393, cpu_cores: 96, cpu_cores_effective: 24, dph_total: 0.3 };
    expect(factsFromInstance(9, inst).cpuRamMb).toBe(16098);
    // Nulls where Vast sends them: the whole host is assumed only when the cores are unknown.
    expect(factsFromInstance(9, { ...inst, cpu_cores: null }).cpuRamMb).toBe(64393);
  });
});

describe('a stopping instance is recognised while it still loads', () => {
  it('intended_status stopped, or cur_state stopped with no start scheduled', () => {
    expect(stoppingEvidence({ id: 1, actual_status: 'loading', intended_status: 'stopped' })).toMatch(
      /intends it stopped.*intended_status stopped/,
    );
    expect(
      stoppingEvidence({
        id: 1,
        actual_status: 'loading',
        intended_status: 'running',
        cur_state: 'stopped',
        next_state: 'stopped',
      }),
    ).toMatch(/holds it stopped/);
    expect(
      stoppingEvidence({
        id: 1,
        actual_status: 'loading',
        intended_status: 'running',
        cur_state: 'stopped',
        next_state: 'running',
      }),
    ).toBeNull();
    expect(
      stoppingEvidence({ id: 1, actual_status: 'loading', intended_status: 'running', cur_state: 'running' }),
    ).toBeNull();
  });
});
