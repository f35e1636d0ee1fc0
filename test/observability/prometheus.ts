import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../infra/temporal/dev-server.js';
import { pollUntil } from '../../infra/dev/poll.js';

export const OBSERVABILITY_DIR = path.resolve(import.meta.dirname, '../../infra/observability');

/** Debian's prometheus package (.ci/run installs it); the tests fail loudly without it. */
export function requireTool(name: 'prometheus' | 'promtool'): string {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const bin = found.stdout.trim();
  if (found.status !== 0 || !bin) {
    throw new Error(`${name} is not installed: apt-get install -y prometheus (.ci/run does this)`);
  }
  return bin;
}

export interface QueryResult {
  status: string;
  error?: string;
  data?: { resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> };
}

export interface Prom {
  url: string;
  query(expr: string): Promise<QueryResult>;
  close(): Promise<void>;
}

/**
 * A Prometheus of the test's own: a free port, a fresh data directory, scraping `target` (host:port)
 * every second and evaluating `ruleFiles` every second.
 */
export async function startPrometheus(target: string, ruleFiles: string[]): Promise<Prom> {
  const bin = requireTool('prometheus');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'prom-test-'));
  const config = path.join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    JSON.stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: ruleFiles,
      scrape_configs: [{ job_name: 'control-worker', static_configs: [{ targets: [target] }] }],
    }),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc: ChildProcess = spawn(
    bin,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  await pollUntil(
    'prometheus ready',
    async () => {
      if (proc.exitCode !== null) throw new Error(`prometheus exited ${proc.exitCode}: ${stderr}`);
      return (await fetch(`${url}/-/ready`)).ok ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200, isFatal: () => proc.exitCode !== null },
  );
  return {
    url,
    async query(expr) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
      return (await res.json()) as QueryResult;
    },
    async close() {
      proc.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
