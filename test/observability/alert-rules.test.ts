import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { OBSERVABILITY_DIR, requireTool } from './prometheus.js';

/** The alert rules are valid and do what alerts.test.yml says (promtool's own rule unit tests). */
describe('alert rules', () => {
  const promtool = requireTool('promtool');
  const run = (...args: string[]) => spawnSync(promtool, args, { cwd: OBSERVABILITY_DIR, encoding: 'utf8' });

  it('pass promtool check rules', () => {
    const r = run('check', 'rules', 'alerts.yml');
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/SUCCESS: 6 rules found/);
  });

  it('pass promtool test rules (alerts.test.yml)', () => {
    const r = run('test', 'rules', path.join(OBSERVABILITY_DIR, 'alerts.test.yml'));
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/SUCCESS/);
  });

  it("the compose stack's Prometheus config is valid and its rules load", () => {
    // Its rule path is the container's mount: check a copy that points at the file here.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'prom-config-'));
    const config = readFileSync(path.join(OBSERVABILITY_DIR, 'prometheus.yml'), 'utf8');
    expect(config).toContain('/etc/prometheus/alerts.yml');
    const copy = path.join(dir, 'prometheus.yml');
    writeFileSync(copy, config.replace('/etc/prometheus/alerts.yml', path.join(OBSERVABILITY_DIR, 'alerts.yml')));
    const r = run('check', 'config', copy);
    rmSync(dir, { recursive: true, force: true });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/SUCCESS: 6 rules found/);
  });
});
