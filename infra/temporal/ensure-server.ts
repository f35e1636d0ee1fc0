import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDir } from './ensure-cli.js';

const SERVER_MODULE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'server');

/** The pinned Temporal server release, read from infra/temporal/server/go.mod (the one place to change it). */
export function pinnedServerVersion(): string {
  const mod = readFileSync(path.join(SERVER_MODULE_DIR, 'go.mod'), 'utf8');
  const m = /^require go\.temporal\.io\/server (v[0-9][^\s]*)/m.exec(mod);
  if (!m?.[1]) throw new Error('infra/temporal/server/go.mod does not pin go.temporal.io/server');
  return m[1];
}

export interface ServerBinaries {
  version: string;
  /** `temporal-server`: go.temporal.io/server/cmd/server. */
  server: string;
  /** `temporal-sql-tool`: go.temporal.io/server/cmd/tools/sql (schemas embedded). */
  sqlTool: string;
}

const MAIN_PACKAGES = {
  server: 'go.temporal.io/server/cmd/server',
  sqlTool: 'go.temporal.io/server/cmd/tools/sql',
} as const;
const BINARY_NAMES = { server: 'temporal-server', sqlTool: 'temporal-sql-tool' } as const;

/**
 * The pinned server and schema tool: the cached build if there is one, else built from the Go module
 * proxy. The cache path carries the version, so changing the pin is the only thing that rebuilds.
 */
export function ensureTemporalServer(log: (msg: string) => void = (m) => console.error(m)): ServerBinaries {
  const version = pinnedServerVersion();
  const dir = path.join(cacheDir(), `temporal-server-${version}`);
  const out: ServerBinaries = {
    version,
    server: path.join(dir, BINARY_NAMES.server),
    sqlTool: path.join(dir, BINARY_NAMES.sqlTool),
  };
  for (const key of ['server', 'sqlTool'] as const) {
    if (existsSync(out[key])) continue;
    mkdirSync(dir, { recursive: true });
    log(`building ${BINARY_NAMES[key]} ${version} into ${dir} (once per pin)…`);
    // Built beside the target and renamed, so an interrupted build never leaves a binary that looks cached.
    const partial = `${out[key]}.partial-${process.pid}`;
    // nice: the build is CPU-heavy and CI shares its cores with whatever else runs there.
    execFileSync('nice', ['-n', '10', 'go', 'build', '-o', partial, MAIN_PACKAGES[key]], {
      cwd: SERVER_MODULE_DIR,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, GOFLAGS: '-mod=mod' },
    });
    renameSync(partial, out[key]);
  }
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const bins = ensureTemporalServer();
  console.log(`${bins.server}\n${bins.sqlTool}`);
}
