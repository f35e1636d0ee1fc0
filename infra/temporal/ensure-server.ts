import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDir } from './ensure-cli.js';

const SERVER_MODULE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'server');

/** The pinned Temporal server release, read from infra/temporal/server/go.mod (the one place to change it). */
export function pinnedServerVersion(): string {
  const mod = readFileSync(path.join(SERVER_MODULE_DIR, 'go.mod'), 'utf8');
  const m = /^(?:require)?\s*go\.temporal\.io\/server (v[0-9][^\s]*)/m.exec(mod);
  if (!m?.[1]) throw new Error('infra/temporal/server/go.mod does not pin go.temporal.io/server');
  return m[1];
}

export interface ServerBinaries {
  version: string;
  /** `temporal-server`: our main (server/cmd/server), upstream's with our authorizer (server/hostauth). */
  server: string;
  /** `temporal-sql-tool`: go.temporal.io/server/cmd/tools/sql (schemas embedded). */
  sqlTool: string;
}

const MAIN_PACKAGES = {
  server: './cmd/server',
  sqlTool: 'go.temporal.io/server/cmd/tools/sql',
} as const;
const BINARY_NAMES = { server: 'temporal-server', sqlTool: 'temporal-sql-tool' } as const;

/**
 * SHA-256 (12 hex) over our Go source and the module files: what the server binary is built from besides
 * the pinned release, so an edited authorizer is a new cache entry. Tests and test data do not count.
 */
export function serverSourceHash(): string {
  const h = createHash('sha256');
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) return e.name === 'testdata' ? [] : walk(p);
      return (e.name.endsWith('.go') && !e.name.endsWith('_test.go')) || e.name === 'go.mod' || e.name === 'go.sum'
        ? [p]
        : [];
    });
  for (const f of walk(SERVER_MODULE_DIR).sort()) {
    h.update(path.relative(SERVER_MODULE_DIR, f)).update('\0').update(readFileSync(f)).update('\0');
  }
  return h.digest('hex').slice(0, 12);
}

/**
 * The pinned server and schema tool: the cached build if there is one, else built from the Go module
 * proxy. The schema tool's path carries the version; the server's also the hash of our Go source.
 */
export function ensureTemporalServer(log: (msg: string) => void = (m) => console.error(m)): ServerBinaries {
  const version = pinnedServerVersion();
  const dir = path.join(cacheDir(), `temporal-server-${version}`);
  const out: ServerBinaries = {
    version,
    server: path.join(dir, `gpu-fleet-${serverSourceHash()}`, BINARY_NAMES.server),
    sqlTool: path.join(dir, BINARY_NAMES.sqlTool),
  };
  for (const key of ['server', 'sqlTool'] as const) {
    if (existsSync(out[key])) continue;
    mkdirSync(path.dirname(out[key]), { recursive: true });
    log(`building ${BINARY_NAMES[key]} ${version} into ${path.dirname(out[key])}…`);
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
