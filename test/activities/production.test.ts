import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProductionRunner } from '../../activities/gpu-host/production.js';
import { pollUntil } from '../../infra/dev/poll.js';

describe('production prover runner', () => {
  it('logs a command that cannot start, and is not running, instead of crashing the worker', async () => {
    const logFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'production-')), 'production.log');
    const runner = new ProductionRunner(['/nonexistent/curio'], logFile);
    expect(runner.start({})).toBe(true);
    const log = await pollUntil(
      'the failure in the log',
      () => {
        const text = readFileSync(logFile, 'utf8');
        return text.includes('failed to start') ? text : undefined;
      },
      { timeoutMs: 5000, intervalMs: 20 },
    );
    expect(log).toContain('--- production prover failed to start: spawn /nonexistent/curio ENOENT');
    expect(runner.running).toBe(false);
  });
});
