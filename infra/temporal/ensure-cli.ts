import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI_MODULE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'cli');

/** The pinned CLI version, read from our go.mod so there is one place to change it. */
export function pinnedVersion(): string {
  const mod = readFileSync(path.join(CLI_MODULE_DIR, 'go.mod'), 'utf8');
  const m = /github\.com\/temporalio\/cli (v[0-9][^\s]*)/.exec(mod);
  if (!m?.[1]) throw new Error('infra/temporal/cli/go.mod does not pin github.com/temporalio/cli');
  return m[1];
}

export function cacheDir(): string {
  return process.env.GPU_FLEET_CACHE ?? path.join(os.homedir(), '.cache', 'gpu-fleet');
}

function onPath(): string | null {
  const res = spawnSync('sh', ['-c', 'command -v temporal'], { encoding: 'utf8' });
  const found = res.stdout.trim();
  return res.status === 0 && found ? found : null;
}

/**
 * A `temporal` binary: TEMPORAL_CLI if set, else one on PATH, else the cached build of the pinned
 * version, else builds it from the Go module proxy (first time: several minutes on 2 cores).
 */
export function ensureTemporalCli(log: (msg: string) => void = (m) => console.error(m)): string {
  if (process.env.TEMPORAL_CLI) return process.env.TEMPORAL_CLI;
  const existing = onPath();
  if (existing) return existing;
  const version = pinnedVersion();
  const target = path.join(cacheDir(), `temporal-${version}`, 'temporal');
  if (existsSync(target)) return target;
  mkdirSync(path.dirname(target), { recursive: true });
  log(`building Temporal CLI ${version} into ${target} (first run only; takes a few minutes)…`);
  execFileSync('go', ['build', '-o', target, 'github.com/temporalio/cli/cmd/temporal'], {
    cwd: CLI_MODULE_DIR,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, GOFLAGS: '-mod=mod' },
  });
  return target;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  if (process.env.TEMPORAL_ADDRESS) {
    console.log(`TEMPORAL_ADDRESS=${process.env.TEMPORAL_ADDRESS} is set; using that server`);
  } else {
    console.log(ensureTemporalCli());
  }
}
