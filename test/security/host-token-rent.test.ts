import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVastActivities, type RentOfferInput } from '../../activities/vast/activities.js';
import { VastClient } from '../../activities/vast/client.js';
import { startVastSim, type VastSim } from '../../infra/sim/vast/server.js';
import {
  ControlConfigSchema,
  GpuHostConfigSchema,
  hostEnvFromConfig,
  hostTokenFromConfig,
  loadConfig,
} from '../../workers/setup/config.js';
import { mintHostToken, verifyHostToken } from '../../activities/vast/host-token.js';
import { hostTaskQueue } from '../../workflows/domain/task-queues.js';
import type { RentedInstance } from '../../workflows/domain/types.js';
import { simOffer } from '../helpers/offers.js';
import { pollUntil } from '../../infra/dev/poll.js';

/**
 * The rent activity gives each rental a token of its own in the instance's env (and nowhere else), bound
 * to the lifecycle that rents and the label it rents under; the configuration around it.
 */
const TOKEN_KEY = 'rent-test-host-token-key-0123456789abcdef';
const VAST_KEY = 'rent-test-vast-key';
const base = { DATABASE_URL: 'postgres://x@127.0.0.1/x', VAST_API_KEY: VAST_KEY, TEMPORAL_NAMESPACE: 'fleet' };
const DAY_MS = 86_400_000;

describe('the rent activity with GPU_FLEET_HOST_TOKEN_KEY', () => {
  const offers = [simOffer(), simOffer(), simOffer()];
  const booted = new Map<number, Record<string, string>>();
  let sim: VastSim;
  let acts: ReturnType<typeof createVastActivities>;
  beforeAll(async () => {
    sim = await startVastSim({
      offers,
      apiKey: VAST_KEY,
      // No GPU-host processes: what matters is the env Vast would start them with.
      bootHost: (offer, _id, env) => {
        booted.set(offer.id, env);
        return Promise.resolve({ workDir: '', alive: true, kill() {} });
      },
    });
    const cfg = loadConfig(ControlConfigSchema, { ...base, GPU_FLEET_HOST_TOKEN_KEY: TOKEN_KEY });
    const hostToken = hostTokenFromConfig(cfg);
    acts = createVastActivities({
      vast: new VastClient({ baseUrl: sim.url, apiKey: VAST_KEY }),
      hostEnv: hostEnvFromConfig(cfg),
      ...(hostToken ? { hostToken } : {}),
      pollIntervalMs: 10,
    });
  });
  afterAll(async () => sim?.close());

  const rentAs = (workflowId: string, offerId: number, label: string, queue = hostTaskQueue(label)) =>
    new MockActivityEnvironment({
      namespace: 'fleet',
      workflowNamespace: 'fleet',
      workflowExecution: { workflowId, runId: '7d2f4b8e-1c3a-4e5f-9a6b-0c1d2e3f4a5b' },
    }).run<[RentOfferInput], RentedInstance, typeof acts.rentOffer>(acts.rentOffer, {
      offerId: offerId,
      label,
      image: 'img',
      diskGb: 200,
      hostTaskQueue: queue,
    });

  it('puts a token bound to the lifecycle, the label and the namespace in the instance env only', async () => {
    const offer = offers[0]!;
    const label = `gpufleet-instance-offer-${offer.id}.7d2f4b8e-1c3a-4e5f-9a6b-0c1d2e3f4a5b`;
    const before = Date.now();
    const rented = await rentAs(`instance-offer-${offer.id}`, offer.id, label);
    // Vast boots the machine after the create answers (the simulator's start-up, compressed).
    const hostEnv = await pollUntil('the instance booted', () => booted.get(offer.id), { timeoutMs: 15_000 });
    const token = hostEnv.TEMPORAL_API_KEY ?? '';
    const v = verifyHostToken(TOKEN_KEY, token, Date.now());
    expect(v).toEqual({
      ok: true,
      claims: { namespace: 'fleet', label, workflowId: `instance-offer-${offer.id}`, expiresAtSec: expect.any(Number) },
    });
    // 90 days by default, from the rent.
    const expiresMs = v.ok ? v.claims.expiresAtSec * 1000 : 0;
    expect(expiresMs).toBeGreaterThanOrEqual(before + 90 * DAY_MS - 1000);
    expect(expiresMs).toBeLessThanOrEqual(Date.now() + 90 * DAY_MS);
    expect('TEMPORAL_API_KEY='.length + token.length).toBeLessThanOrEqual(256);
    // The result goes into the lifecycle's history: no token there.
    expect(JSON.stringify(rented)).not.toContain('gfh1.');
    // Only its expiry, for the watch to retire the host in time.
    expect(rented.hostTokenExpiresAt).toBe(new Date(expiresMs).toISOString());
    // The host worker accepts what it was given.
    expect(() => loadConfig(GpuHostConfigSchema, hostEnv)).not.toThrow();

    // A retried rent adopts the instance by its label, and reads the expiry of the token it carries.
    const again = await rentAs(`instance-offer-${offer.id}`, offer.id, label);
    expect(again.instanceId).toBe(rented.instanceId);
    expect(again.hostTokenExpiresAt).toBe(rented.hostTokenExpiresAt);
    expect(JSON.stringify(again)).not.toContain('gfh1.');
    expect(sim.ledger().filter((r) => r.offerId === offer.id)).toHaveLength(1);
  });

  it('refuses, as Internal and final, a rental whose queue is not host/<label>', async () => {
    const offer = offers[1]!;
    const err = await rentAs('instance-offer-9', offer.id, 'gpufleet-x', 'host/gpufleet-y').then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe('Internal');
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    expect(sim.ledger().some((r) => r.offerId === offer.id)).toBe(false);
  });

  it('without the key, a host gets no token (HOST_TEMPORAL_API_KEY, if any, as before)', async () => {
    const cfg = loadConfig(ControlConfigSchema, { ...base, HOST_TEMPORAL_API_KEY: 'shared' });
    expect(hostTokenFromConfig(cfg)).toBeUndefined();
    expect(hostEnvFromConfig(cfg).TEMPORAL_API_KEY).toBe('shared');
  });
});

describe('host token configuration', () => {
  it('the control worker takes a token key or a shared host key, not both, and a key of 32+ characters', () => {
    expect(() =>
      loadConfig(ControlConfigSchema, { ...base, GPU_FLEET_HOST_TOKEN_KEY: TOKEN_KEY, HOST_TEMPORAL_API_KEY: 'k' }),
    ).toThrow(/HOST_TEMPORAL_API_KEY: set GPU_FLEET_HOST_TOKEN_KEY .* not both/);
    expect(() => loadConfig(ControlConfigSchema, { ...base, GPU_FLEET_HOST_TOKEN_KEY: 'short' })).toThrow(
      /GPU_FLEET_HOST_TOKEN_KEY: must be at least 32 characters/,
    );
    expect(() =>
      loadConfig(ControlConfigSchema, { ...base, GPU_FLEET_HOST_TOKEN_KEY: TOKEN_KEY, HOST_TOKEN_TTL_DAYS: '0.5' }),
    ).toThrow(/HOST_TOKEN_TTL_DAYS: must be at least 1 \(day\)/);
  });

  it('refuses to start when our longest rental’s token would not fit Vast’s env entry (a long namespace)', () => {
    const long = loadConfig(ControlConfigSchema, {
      ...base,
      TEMPORAL_NAMESPACE: 'n'.repeat(60),
      GPU_FLEET_HOST_TOKEN_KEY: TOKEN_KEY,
    });
    expect(() => hostTokenFromConfig(long)).toThrow(/TEMPORAL_NAMESPACE: the host token .* over the 239/);
    const fits = loadConfig(ControlConfigSchema, {
      ...base,
      TEMPORAL_NAMESPACE: 'n'.repeat(30),
      GPU_FLEET_HOST_TOKEN_KEY: TOKEN_KEY,
    });
    expect(hostTokenFromConfig(fits)).toBeTypeOf('function');
  });

  it('the GPU-host worker refuses a token for another queue, namespace, or one expired, by name', () => {
    const token = (label: string, namespace: string, expiresAtSec: number) =>
      mintHostToken(TOKEN_KEY, { namespace, label, workflowId: 'wf', expiresAtSec });
    const later = Math.floor(Date.now() / 1000) + 3600;
    const host = (apiKey: string) => ({
      TEMPORAL_NAMESPACE: 'fleet',
      HOST_TASK_QUEUE: 'host/gpufleet-a',
      TEMPORAL_API_KEY: apiKey,
    });
    expect(() => loadConfig(GpuHostConfigSchema, host(token('gpufleet-a', 'fleet', later)))).not.toThrow();
    expect(() => loadConfig(GpuHostConfigSchema, host(token('gpufleet-b', 'fleet', later)))).toThrow(
      /TEMPORAL_API_KEY: is a host token for host\/gpufleet-b, but HOST_TASK_QUEUE is host\/gpufleet-a/,
    );
    expect(() => loadConfig(GpuHostConfigSchema, host(token('gpufleet-a', 'other', later)))).toThrow(/namespace other/);
    expect(() => loadConfig(GpuHostConfigSchema, host(token('gpufleet-a', 'fleet', 1)))).toThrow(/expired/);
    // A key that is not a host token (Temporal Cloud's, or a shared one) is the server's business.
    expect(() => loadConfig(GpuHostConfigSchema, host('0123456789abcdef'))).not.toThrow();
  });
});
