import type { Client } from '@temporalio/client';
import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerFleet } from '../../workers/cli/commands/fleet.js';
import { registerDeploy } from '../../workers/cli/commands/deploy.js';
import { registerSchedule } from '../../workers/cli/commands/schedule.js';
import type { CliContext } from '../../workers/cli/context.js';
import { ensureReconcilerSchedule, ensureScalerSchedule } from '../../workers/setup/schedules.js';
import { DEFAULT_MIN_RATE } from '../../workflows/domain/policy/defaults.js';
import { DEFAULT_OFFER_FILTER } from '../../workflows/domain/policy/offer-filter.js';
import { LIFECYCLE_WORKFLOW_TYPE } from '../../workflows/domain/task-queues.js';
import { ADMIN_WORKFLOW_TYPES } from '../../workers/cli/views.js';
import * as registered from '../../workflows/index.js';
import { killRequestSignal, lifecycleStatusQuery, promoteOverrideUpdate } from '../../workflows/definitions.js';
import { LIFECYCLE_MESSAGES } from '../../workers/cli/messages.js';
import { SECURITY_VARIABLES } from '../../workers/cli/context.js';
import { TemporalSecuritySchema } from '../../workers/setup/temporal-connection.js';
import type { FleetScalerInput } from '../../workflows/fleet-scaler.js';
import type { LifecycleRequest } from '../../workflows/domain/types.js';
import { offerOn } from '../helpers/store-rentals.js';

/** What the commands sent: workflow starts and schedule creations, captured instead of a server. */
interface Sent {
  /** What the control worker answers webhookCheck: whether it has a webhook. */
  webhook: boolean;
  executed: Array<{ args: unknown[] }>;
  started: Array<{ args: unknown[] }>;
  scheduled: Array<{ scheduleId: string; action: { workflowType: unknown; args?: unknown[] } }>;
}

function fakeClient(sent: Sent): Client {
  // offers runs offerReport: its answer, empty.
  const emptyReport = {
    ranked: [],
    leftOut: [],
    badMachines: [],
    excluded: [],
    restingMachines: [],
    dropped: { count: 0, firstReason: null },
  };
  return {
    workflow: {
      execute: async (wf: unknown, opts: { args: unknown[] }) => {
        if (wf === 'webhookCheck') return { webhook: sent.webhook };
        sent.executed.push(opts);
        if (wf === 'offerCheck') return { offer: offerOn(5), badMachine: null };
        return emptyReport;
      },
      start: async (_wf: unknown, opts: { args: unknown[] }) => void sent.started.push(opts),
      getHandle: () => ({ describe: () => Promise.reject(new Error('no such workflow')) }),
    },
    schedule: {
      create: async (opts: Sent['scheduled'][number]) => {
        sent.scheduled.push(opts);
      },
    },
  } as unknown as Client;
}

async function runCli(args: string[], webhook = true): Promise<Sent> {
  const sent: Sent = { webhook, executed: [], started: [], scheduled: [] };
  const client = fakeClient(sent);
  const ctx = {
    temporal: async () => client,
    uiLink: () => null,
    taskQueue: 'q',
    operator: 'tester',
  } as unknown as CliContext;
  const program = new Command('gpu-fleet').exitOverride();
  registerFleet(program, ctx);
  registerSchedule(program, ctx);
  registerDeploy(program, ctx);
  await program.parseAsync(['node', 'gpu-fleet', ...args]);
  return sent;
}

afterEach(() => vi.restoreAllMocks());

describe('schedules name registered workflows', () => {
  it('start functions the control worker registers, by their own name', async () => {
    const sent: Sent = { webhook: true, executed: [], started: [], scheduled: [] };
    const client = fakeClient(sent);
    const input = { filter: DEFAULT_OFFER_FILTER } as unknown as FleetScalerInput;
    await ensureScalerSchedule(client, { intervalSec: 600, input });
    await ensureReconcilerSchedule(client, { intervalSec: 600 });
    expect(sent.scheduled).toHaveLength(2);
    for (const { action } of sent.scheduled) {
      expect(typeof action.workflowType).toBe('function');
      const fn = action.workflowType as (...args: never[]) => unknown;
      expect(registered[fn.name as keyof typeof registered], fn.name).toBe(fn);
    }
  });
});

describe('workflow type names outside workflow code', () => {
  it('name registered workflows: the visibility activity lists lifecycles, the CLI leaves admin runs out', () => {
    expect(LIFECYCLE_WORKFLOW_TYPE).toBe(registered.instanceLifecycle.name);
    for (const name of ADMIN_WORKFLOW_TYPES) expect(Object.keys(registered)).toContain(name);
  });

  it("the CLI's query, update and signal names are the lifecycle's own", () => {
    expect(LIFECYCLE_MESSAGES).toEqual({
      status: lifecycleStatusQuery.name,
      promote: promoteOverrideUpdate.name,
      killRequest: killRequestSignal.name,
    });
  });
});

describe('the connection without the security schema', () => {
  it('is taken only when none of the variables the schema reads is set', () => {
    expect([...SECURITY_VARIABLES].sort()).toEqual(Object.keys(TemporalSecuritySchema.shape).sort());
  });
});

describe('one default offer filter and minRate for the CLI', () => {
  it('offers and schedule setup search with DEFAULT_OFFER_FILTER and judge by DEFAULT_MIN_RATE', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const offers = await runCli(['offers', '--json']);
    const setup = await runCli(['schedule', 'setup']);
    const offerInput = offers.executed[0]?.args[0] as { filter: unknown; minRate: number };
    const scalerInput = setup.scheduled.find((s) => s.scheduleId === 'fleet-scaler')?.action.args?.[0] as
      FleetScalerInput | undefined;
    expect(offerInput.filter).toEqual(DEFAULT_OFFER_FILTER);
    expect(scalerInput?.filter).toEqual(DEFAULT_OFFER_FILTER);
    expect(offerInput.minRate).toBe(DEFAULT_MIN_RATE);
    expect(scalerInput?.minRate).toBe(DEFAULT_MIN_RATE);
  });

  it('the operator overrides GPU models and search flags (any drops one: null), not the rest of the filter', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const offers = await runCli(['offers', '--gpu', 'A40', '--verified', 'any', '--json']);
    expect((offers.executed[0]?.args[0] as { filter: unknown }).filter).toEqual({
      ...DEFAULT_OFFER_FILTER,
      gpuModels: ['A40'],
      verified: null,
    });
  });
});

describe('a notify step only where the control worker has a webhook', () => {
  const scalerLifecycle = (sent: Sent) =>
    (sent.scheduled.find((s) => s.scheduleId === 'fleet-scaler')?.action.args?.[0] as FleetScalerInput).lifecycle;
  const deployed = (sent: Sent) => sent.started[0]?.args[0] as LifecycleRequest;

  it('deploy and schedule setup pass notify: false when the worker has none', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    expect(deployed(await runCli(['deploy', '5'], false)).notify).toBe(false);
    expect(scalerLifecycle(await runCli(['schedule', 'setup'], false))?.notify).toBe(false);
  });

  it('and leave the step in when it has one', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    expect(deployed(await runCli(['deploy', '5'], true)).notify).toBe(true);
    expect(scalerLifecycle(await runCli(['schedule', 'setup'], true))?.notify).toBeUndefined();
  });
});
