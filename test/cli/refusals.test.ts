import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Command, CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { offerIdArg, refuseRepeatedOptions, writableFile } from '../../workers/cli/args.js';
import { registerHistory } from '../../workers/cli/commands/history.js';
import { registerDeploy } from '../../workers/cli/commands/deploy.js';
import { registerLifecycle } from '../../workers/cli/commands/lifecycle.js';
import { registerFleet } from '../../workers/cli/commands/fleet.js';
import { renderReport } from '../../workers/cli/commands/report.js';
import { CliContext } from '../../workers/cli/context.js';
import { spendReport, type SpendRow } from '../../workflows/domain/policy/spend-report.js';

/**
 * The CLI refuses what it cannot mean, before it connects anywhere: a repeated single-value option, an id
 * with leading zeros, an export path it cannot write. The parsers are called directly; one subprocess
 * run proves the real entry point maps each refusal to exit 2.
 */
const tmp = mkdtempSync(path.join(os.tmpdir(), 'cli-refusals-'));

/** The CLI's commands as the entry point configures them (usage errors throw; output captured). */
function program(): { cmd: Command; err: string[] } {
  const err: string[] = [];
  const cmd = new Command('gpu-fleet');
  const ctx = new CliContext();
  registerDeploy(cmd, ctx);
  registerLifecycle(cmd, ctx);
  registerHistory(cmd, ctx);
  registerFleet(cmd, ctx);
  const configure = (c: Command) => {
    c.exitOverride().configureOutput({ writeErr: (t) => err.push(t), writeOut: () => undefined });
    refuseRepeatedOptions(c);
    for (const sub of c.commands) configure(sub);
  };
  configure(cmd);
  return { cmd, err };
}

async function usageError(args: string[]): Promise<{ error: CommanderError; text: string }> {
  const { cmd, err } = program();
  const error = await cmd.parseAsync(args, { from: 'user' }).then(
    () => new Error(`accepted: ${args.join(' ')}`),
    (e: unknown) => e,
  );
  if (!(error instanceof CommanderError)) throw error;
  return { error, text: err.join('') };
}

describe('the CLI refuses what it cannot mean', () => {
  it('refuses a single-value option given twice (the last would silently win)', async () => {
    const { error, text } = await usageError(['deploy', '46714145', '--min-rate', '29', '--min-rate', '2900']);
    expect(error.code).toBe('gpu-fleet.repeatedOption');
    expect(text).toMatch(/option '--min-rate <proofs\/h>' given more than once; give it once/);
  });

  it('still takes a repeatable option more than once', () => {
    const { cmd } = program();
    const offers = cmd.commands.find((c) => c.name() === 'offers');
    expect(offers, 'the offers command').toBeDefined();
    expect(() => offers?.parseOptions(['--gpu', 'RTX 4090', '--gpu', 'A40'])).not.toThrow();
    expect(offers?.opts()).toMatchObject({ gpu: ['RTX 4090', 'A40'] });
    expect(() => offers?.parseOptions(['--min-rate', '29', '--min-rate', '30'])).toThrow(/given more than once/);
  });

  it('refuses an id with leading zeros, naming why', async () => {
    expect(() => offerIdArg('046714145')).toThrow(
      /offerId must be a whole number .*got '046714145' \(no leading zeros/,
    );
    expect(offerIdArg('46714145')).toBe(46714145);
    const { text } = await usageError(['deploy', '046714145']);
    expect(text).toMatch(/no leading zeros/);
    const rate = await usageError(['deploy', '1', '--min-rate', '029']);
    expect(rate.text).toMatch(/--min-rate must be .*got '029' \(no leading zeros/);
  });

  it('refuses an export path it cannot write, before fetching anything', async () => {
    expect(() => writableFile('<file>')('/nonexistent-dir/x.json')).toThrow(
      /'\/nonexistent-dir\/x.json' cannot be written: no directory \/nonexistent-dir/,
    );
    expect(() => writableFile('<file>')(tmp)).toThrow(/it is a directory/);
    expect(writableFile('<file>')(path.join(tmp, 'h.json'))).toBe(path.join(tmp, 'h.json'));
    if (process.getuid?.() !== 0) {
      const locked = mkdtempSync(path.join(tmp, 'ro-'));
      chmodSync(locked, 0o500);
      expect(() => writableFile('<file>')(path.join(locked, 'h.json'))).toThrow(/is not writable/);
    }
    const { text } = await usageError(['history', 'export', 'wf-1', '/nonexistent-dir/x.json']);
    expect(text).toMatch(/cannot be written: no directory/);
  });

  it('exits 2 with the message from the real entry point, without a server', async () => {
    const run = promisify(execFile);
    const cli = (args: string[]) =>
      run(process.execPath, ['--import', 'tsx', 'workers/cli.ts', ...args], {
        // Nothing listens here: a refusal must come before any connection.
        env: { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1' },
      }).then(
        () => ({ code: 0, err: '' }),
        (e: { code: number; stderr: string }) => ({ code: e.code, err: e.stderr }),
      );
    const [repeated, zero, path404] = await Promise.all([
      cli(['deploy', '46714145', '--min-rate', '29', '--min-rate', '2900']),
      cli(['deploy', '046714145']),
      cli(['history', 'export', 'wf-1', '/nonexistent-dir/x.json']),
    ]);
    expect(repeated).toMatchObject({ code: 2, err: expect.stringMatching(/given more than once/) });
    expect(zero).toMatchObject({ code: 2, err: expect.stringMatching(/no leading zeros/) });
    expect(path404).toMatchObject({ code: 2, err: expect.stringMatching(/cannot be written: no directory/) });
  }, 60_000);
});

describe('report', () => {
  it('counts a rental promoted and later killed by its watch once, as killed', () => {
    const NOW = Date.parse('2026-12-05T12:00:00Z');
    const at = (ms: number) => new Date(ms).toISOString();
    const row: SpendRow = {
      gpuName: 'RTX 3090',
      outcome: 'killed',
      failureType: 'RateDegraded',
      createdAt: at(NOW - 6 * 3_600_000),
      dph: 0.5,
      rentedAt: at(NOW - 6 * 3_600_000),
      verdictAt: at(NOW - 5 * 3_600_000),
      destroyedAt: at(NOW - 3_600_000),
      costUsd: 2.5,
      beforeVerdictUsd: 0.5,
      productionUsd: 2,
      productionSec: 4 * 3600,
      benchRate: 30,
      costCountedAt: at(NOW - 3_600_000),
    };
    const r = spendReport([row], NOW, at(NOW - 24 * 3_600_000), null);
    expect(r.total).toMatchObject({ rentals: 1, promoted: 0, killed: 1 });
    expect(renderReport(r)).toMatch(/rentals +1 \(0 promoted, 1 killed\)/);
  });
});
