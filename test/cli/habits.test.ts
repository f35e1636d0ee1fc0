import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CliContext, CliError } from '../../workers/cli/context.js';
import { emit, formatOf } from '../../workers/cli/output-format.js';
import { buildProgram, packageVersion } from '../../workers/cli/program.js';
import { type LifecycleIdLister, resolveLifecycleId } from '../../workers/cli/resolve.js';

/**
 * An operator's habits: `--version`, a bare group printing its help, a store read without DATABASE_URL, `-o json|wide|name`, a lifecycle named
 * by its offer id or a unique prefix, and `offers` naming what it left out. The parsing, output and
 * resolution run in-process against stub answers; one subprocess run proves the entry point's exit codes.
 */
const run = promisify(execFile);
afterEach(() => vi.restoreAllMocks());

/** The real program on a context whose Temporal client is `client`; stdout captured. */
async function runWith(client: Partial<Client>, args: string[]): Promise<string> {
  const ctx = new CliContext();
  vi.spyOn(ctx, 'temporal').mockResolvedValue(client as Client);
  const out: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.map(String).join(' ')));
  await (await buildProgram(ctx, args)).parseAsync(['node', 'gpu-fleet', ...args]);
  return out.join('\n');
}

describe('the entry point', () => {
  it('answers --version from package.json, prints a bare group help with exit 0, refuses an unknown word', async () => {
    const cli = (args: string[]) =>
      run(process.execPath, ['bin/gpu-fleet.mjs', ...args], {
        env: { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1', DATABASE_URL: '' },
      }).then(
        (r) => ({ code: 0, out: r.stdout, err: r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout, err: e.stderr }),
      );
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(packageVersion()).toBe(pkg.version);
    const [version, bare, root, unknown, noStore] = await Promise.all([
      cli(['--version']),
      cli(['machines']),
      cli([]),
      cli(['machines', 'frob']),
      cli(['report']),
    ]);
    expect(version).toMatchObject({ code: 0, out: `${pkg.version}\n` });
    expect(bare.code).toBe(0);
    expect(bare.out).toContain('Usage: gpu-fleet machines [options] [command]');
    expect(bare.out).toMatch(/list \[options\]/);
    expect(root).toMatchObject({ code: 0, out: expect.stringContaining('Usage: gpu-fleet [options] [command]') });
    expect(unknown).toMatchObject({ code: 2, err: expect.stringContaining("unknown command 'frob'") });
    expect(noStore).toMatchObject({ code: 2, err: expect.stringContaining('error: DATABASE_URL is not set') });
  }, 60_000);
});

describe('-o json|wide|name beside --json', () => {
  const views = { text: () => 'TEXT', wide: () => 'WIDE', names: () => ['a', 'b'] };
  it('prints the format asked for; --json is -o json; two formats are refused with exit 2', () => {
    const out: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((t: string) => void out.push(t));
    emit({}, { x: 1 }, views);
    emit({ output: 'wide' }, { x: 1 }, views);
    emit({ output: 'name' }, { x: 1 }, views);
    emit({ json: true }, { x: 1 }, views);
    emit({ output: 'json' }, { x: 1 }, views);
    expect(out).toEqual(['TEXT', 'WIDE', 'a\nb', '{\n  "x": 1\n}', '{\n  "x": 1\n}']);
    expect(() => formatOf({ json: true, output: 'name' })).toThrow(CliError);
    expect(() => formatOf({ json: true, output: 'name' })).toThrow(/two formats/);
  });

  it('offers -o name prints offer ids one per line; -o wide adds columns; a command without wide refuses it', async () => {
    const offer = (offerId: number, machineId: number) => ({
      offerId,
      machineId,
      gpuName: 'A40',
      numGpus: 1,
      cpuRamMb: 64_000,
      dphTotal: 0.5,
      searchedDph: 0.48,
      predictedRate: 40,
      upperRate: 42,
      score: 84,
      source: 'machine',
    });
    const reports = {
      ranked: [offer(11, 1), offer(12, 2)],
      leftOut: [],
      restingMachines: [],
      badMachines: [7, 9],
      dropped: { count: 2, firstReason: 'no gpu_name' },
      excluded: [
        {
          machineId: 7,
          reason: 'rule: 3 kills in 24 h',
          source: 'rule',
          ignored: false,
          markedAt: '2026-12-05T10:00:00Z',
        },
        {
          machineId: 9,
          reason: 'ann: fans loud',
          source: 'operator',
          ignored: false,
          markedAt: '2026-12-05T11:00:00Z',
        },
      ],
    };
    const client = { workflow: { execute: async () => reports } } as unknown as Client;
    expect(await runWith(client, ['offers', '-o', 'name'])).toBe('11\n12');
    const text = await runWith(client, ['offers']);
    expect(text).toContain('offers on 2 machine(s) marked bad are excluded:');
    expect(text).toMatch(/machine 7: rule: 3 kills in 24 h \(marked by rule, /);
    expect(text).toMatch(/machine 9: ann: fans loud \(marked by operator, /);
    expect(text).toContain('2 offer row(s) from Vast unusable, left out (first: no gpu_name)');
    expect(text).not.toContain('search quoted');
    expect(await runWith(client, ['offers', '-o', 'wide'])).toContain('search quoted');
    const json = JSON.parse(await runWith(client, ['offers', '--json'])) as { excludedMachines: unknown[] };
    expect(json.excludedMachines).toHaveLength(2);
    // Two formats are refused before anything is fetched.
    const fetched = vi.fn(async () => reports);
    const counting = { workflow: { execute: fetched } } as unknown as Client;
    await expect(runWith(counting, ['offers', '--json', '-o', 'name'])).rejects.toThrow(/two formats/);
    expect(fetched).not.toHaveBeenCalled();
    await expect(runWith(client, ['machines', 'list', '-o', 'wide'])).rejects.toThrow(
      /-o must be one of text, json, name, got 'wide'/,
    );
  });
});

describe('a lifecycle named by offer id or a unique prefix', () => {
  const ids = ['instance-offer-4671', 'instance-offer-46714145', 'instance-offer-46714146', 'instance-offer-5'];
  const asked: string[] = [];
  const lister: LifecycleIdLister = async (prefix, limit) => {
    asked.push(prefix);
    return ids.filter((id) => id.startsWith(prefix)).slice(0, limit);
  };
  const refusal = (ref: string) =>
    resolveLifecycleId(ref, lister).then(
      () => {
        throw new Error(`accepted ${ref}`);
      },
      (e: unknown) => e as CliError,
    );

  it('an offer id needs no lookup; a unique prefix, or a whole id among longer ones, resolves', async () => {
    asked.length = 0;
    expect(await resolveLifecycleId('46714145', lister)).toBe('instance-offer-46714145');
    expect(asked).toEqual([]);
    expect(await resolveLifecycleId('instance-offer-4671', lister)).toBe('instance-offer-4671');
    // Not in visibility yet (just started): a whole id is taken as typed, the server answers for it.
    expect(await resolveLifecycleId('instance-offer-77', lister)).toBe('instance-offer-77');
    expect(await resolveLifecycleId('instance-offer-46714146', lister)).toBe('instance-offer-46714146');
    expect(await resolveLifecycleId('instance-offer-5', lister)).toBe('instance-offer-5');
    expect(await resolveLifecycleId('instance-o', lister).catch((e: Error) => e.message)).toMatch(/matches 4/);
    expect(await resolveLifecycleId('instance-offer-4671414', lister).catch(String)).toMatch(/matches 2/);
  });

  it('an ambiguous prefix exits 2 naming the candidates; none found exits 2 saying so', async () => {
    const ambiguous = await refusal('instance-offer-46714');
    expect(ambiguous.exitCode).toBe(2);
    expect(ambiguous.message).toBe(
      "'instance-offer-46714' matches 2 lifecycles: instance-offer-46714145, instance-offer-46714146; give more of the id, or the offer id",
    );
    const none = await refusal('instance-x');
    expect(none.exitCode).toBe(2);
    expect(none.message).toMatch(/no lifecycle's workflow id starts with 'instance-x'/);
    const odd = await refusal('instance "x"');
    expect(odd.exitCode).toBe(2);
    const zeros = await refusal('046714145');
    expect(zeros.message).toMatch(/no leading zeros/);
  });

  it('status, kill, promote and logs resolve the same way, before acting; deploy takes an offer id only', async () => {
    const listed: string[] = [];
    const client = {
      workflow: {
        list: ({ query }: { query: string }) => {
          listed.push(query);
          return (async function* () {})();
        },
      },
    } as unknown as Client;
    for (const args of [
      ['status', 'instance-off'],
      ['kill', 'instance-off', '--reason', 'r'],
      ['promote', 'instance-off', '--reason', 'r'],
      ['logs', 'instance-off'],
    ])
      await expect(runWith(client, args)).rejects.toThrow(/no lifecycle's workflow id starts with/);
    expect(listed).toHaveLength(4);
    expect(listed[0]).toBe('WorkflowType = "instanceLifecycle" AND WorkflowId STARTS_WITH "instance-off"');
    await expect(runWith(client, ['deploy', 'instance-offer-4'])).rejects.toThrow(/offerId must be a whole number/);
  });
});
