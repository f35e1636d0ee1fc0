import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HostFarm, startHostFarm } from '../../infra/sim/farm/farm.js';
import { pollUntil } from '../../infra/dev/poll.js';

const STANDIN = path.resolve('infra/sim/farm/standin.sh');
const until = (what: string, cond: () => boolean) =>
  pollUntil(what, () => (cond() ? true : undefined), { timeoutMs: 5000, intervalMs: 20 });

interface Run {
  pid: number;
  out: string[];
  err: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal: NodeJS.Signals): void;
}

// The stand-in is what the GPU-host worker spawns and supervises in place of the real process.
function standin(farm: HostFarm, args: string[]): Run {
  const child = spawn('bash', [STANDIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, SIM_FARM_URL: farm.url },
  });
  const out: string[] = [];
  const err: string[] = [];
  child.stdout.on('data', (b: Buffer) => out.push(...b.toString().trim().split('\n')));
  child.stderr.on('data', (b: Buffer) => err.push(...b.toString().trim().split('\n')));
  return {
    pid: child.pid!,
    out,
    err,
    exited: new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal }))),
    kill: (s) => child.kill(s),
  };
}

describe('host farm stand-ins', () => {
  let farm: HostFarm;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'farm-standin-'));
    farm = await startHostFarm({ baseDir: dir, scale: 0.01 });
  });
  afterAll(async () => farm.close());

  it('prints the fetch progress, leaves the parameters and exits 0', async () => {
    const cache = path.join(dir, 'ok');
    const run = standin(farm, ['paramfetch', cache, '0.2', 'ok']);
    expect(await run.exited).toEqual({ code: 0, signal: null });
    expect(run.out.filter((l) => l.startsWith('fetching '))).toHaveLength(10);
    expect(run.out.at(-1)).toBe('parameters fetched');
    expect(readdirSync(cache).sort()).toEqual([expect.stringMatching(/\.params$/), expect.stringMatching(/\.vk$/)]);
    expect(farm.standins()).toBe(0);
  });

  it('fails like the real fetcher: error on stderr, exit code 1, no parameters', async () => {
    const cache = path.join(dir, 'fail');
    const run = standin(farm, ['paramfetch', cache, '0.2', 'fail']);
    expect(await run.exited).toEqual({ code: 1, signal: null });
    expect(run.err.join('\n')).toMatch(/checksum mismatch/);
    expect(run.out).toHaveLength(4);
    expect(readdirSync(cache)).toEqual([]);
  });

  it('stalls silently until killed, and the kill ends the simulation', async () => {
    const cache = path.join(dir, 'stall');
    const run = standin(farm, ['paramfetch', cache, '0.2', 'stall']);
    await until('three progress lines', () => run.out.length >= 3);
    await new Promise((r) => setTimeout(r, 300));
    expect(run.out).toHaveLength(3);
    expect(farm.standins()).toBe(1);
    run.kill('SIGKILL');
    expect(await run.exited).toEqual({ code: null, signal: 'SIGKILL' });
    await until('the simulation to end', () => farm.standins() === 0);
    expect(readdirSync(cache)).toEqual([]);
  });

  it('stops on SIGTERM with exit code 0 once the simulation has ended', async () => {
    const run = standin(farm, ['paramfetch', path.join(dir, 'term'), '60', 'ok']);
    await until('the fetch to start', () => farm.standins() === 1);
    run.kill('SIGTERM');
    expect(await run.exited).toEqual({ code: 0, signal: null });
    expect(farm.standins()).toBe(0);
  });

  it('exits 1 naming the cause when no farm machine owns the daemon config', async () => {
    const run = standin(farm, ['daemon', '--config', path.join(dir, 'nobody', 'cuzk-daemon.toml')]);
    expect(await run.exited).toEqual({ code: 1, signal: null });
    expect(run.err.join('\n')).toMatch(/no farm host owns .*nobody/);
  });

  it('refuses a malformed request with the field named, and bad usage with exit code 2', async () => {
    const bad = standin(farm, ['paramfetch', path.join(dir, 'bad'), 'soon', 'ok']);
    expect(await bad.exited).toEqual({ code: 1, signal: null });
    expect(bad.err.join('\n')).toMatch(/refused the paramfetch \(400\)[\s\S]*seconds/);
    const usage = standin(farm, ['compositor']);
    expect(await usage.exited).toEqual({ code: 2, signal: null });
    expect(usage.err.join('\n')).toMatch(/usage: standin.sh/);
  });
});
