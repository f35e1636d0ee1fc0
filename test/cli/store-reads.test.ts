import pg from 'pg';
import type { Client } from '@temporalio/client';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { createStoreActivities } from '../../activities/store/activities.js';
import { CliContext, CliError } from '../../workers/cli/context.js';
import { buildProgram } from '../../workers/cli/program.js';
import { machineBlock, offerOn, recordRental } from '../helpers/store-rentals.js';

/**
 * `machines list`, `report` and `logs` read the store (DATABASE_URL) themselves: against rows a rental
 * wrote, with a Temporal client that runs no workflow (it fails the test if one is started).
 */
const machine = machineBlock(730_000_000);
const gpuName = `H4 Test GPU ${machine}`;
let pool: pg.Pool;
let workflowId = '';

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: inject('databaseUrl'), max: 2 });
  const store = createStoreActivities({ pool });
  const ids = await recordRental(store, machine, { offer: { ...offerOn(machine), gpuName } });
  workflowId = ids.workflowId;
  await store.saveLogTail({ ...ids, source: 'cuzk-daemon', text: 'daemon said: CUDA out of memory\n' });
  await store.markMachine({ machineId: machine, action: 'bad', reason: 'ann: fans loud' });
});
afterAll(async () => pool?.end());
afterEach(() => vi.unstubAllEnvs());

const started = vi.fn();
/** A client whose only use is visibility (the machines' last operator actions): no workflow is started. */
const client = {
  workflow: {
    execute: started,
    start: started,
    list: () => (async function* () {})(),
  },
} as unknown as Client;

async function cli(args: string[], databaseUrl: string | undefined = inject('databaseUrl')): Promise<string> {
  vi.stubEnv('DATABASE_URL', databaseUrl);
  const ctx = new CliContext();
  vi.spyOn(ctx, 'temporal').mockResolvedValue(client);
  const out: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.map(String).join(' ')));
  try {
    await (await buildProgram(ctx, args)).parseAsync(['node', 'gpu-fleet', ...args]);
  } finally {
    log.mockRestore();
    await ctx.close();
  }
  return out.join('\n');
}

describe('reads from the store, no workflow run', () => {
  it('machines list names the mark: machine, reason, who', async () => {
    expect((await cli(['machines', 'list', '-o', 'name'])).split('\n')).toContain(String(machine));
    const json = JSON.parse(await cli(['machines', 'list', '--json'])) as {
      machines: Array<{ machineId: number; reason: string; source: string }>;
    };
    expect(json.machines.find((m) => m.machineId === machine)).toMatchObject({
      reason: 'ann: fans loud',
      source: 'operator',
    });
  });

  it("logs prints a lifecycle's stored tail by its offer id", async () => {
    const text = await cli(['logs', String(machine + 1)]);
    expect(text).toContain(`=== cuzk-daemon of rental test-${machine}.`);
    expect(text).toContain('daemon said: CUDA out of memory');
    expect(await cli(['logs', workflowId, '--source', 'output'])).toContain('no log tails stored');
  });

  it('report counts the rental under its GPU', async () => {
    const r = JSON.parse(await cli(['report', '--by', 'gpu', '--json'])) as {
      groups: Array<{ key: string; rentals: number }>;
    };
    expect(r.groups.find((g) => g.key.includes(gpuName))).toMatchObject({ rentals: 1 });
    expect(started).not.toHaveBeenCalled();
  });

  it('without DATABASE_URL a read is refused with exit 2, naming the variable', async () => {
    const refusal = cli(['report'], '');
    await expect(refusal).rejects.toThrow(CliError);
    await expect(refusal).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/^DATABASE_URL is not set/),
    });
  });

  it('an unreachable store names where it looked, never the password', async () => {
    const refusal = cli(['machines', 'list'], 'postgres://ops:s3cret@127.0.0.1:1/fleet');
    await expect(refusal).rejects.toMatchObject({ exitCode: 1, message: expect.stringContaining('127.0.0.1:1/fleet') });
    await expect(refusal).rejects.not.toMatchObject({ message: expect.stringContaining('s3cret') });
  });
});
