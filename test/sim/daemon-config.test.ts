import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderDaemonConfig } from '../../activities/gpu-host/daemon-config.js';
import { readDaemonConfig } from '../../infra/sim/cuzk/toml-config.js';

const dir = mkdtempSync(path.join(tmpdir(), 'daemon-config-'));
const write = (name: string, text: string) => {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
};

describe('cuzk-daemon config file', () => {
  it('a path with quotes, backslashes and a newline reaches the daemon as written', () => {
    const paramCacheDir = '/var/tmp/my "params"\\ dir\nx = 1';
    const text = renderDaemonConfig({ listenAddress: '127.0.0.1:9820', paramCacheDir, partitionWorkers: 7 });
    expect(readDaemonConfig(write('odd.toml', text))).toEqual({
      listen: '127.0.0.1:9820',
      paramCache: paramCacheDir,
      partitionWorkers: 7,
    });
  });

  it('has the sections and keys the daemon reads', () => {
    const text = renderDaemonConfig({ listenAddress: '0.0.0.0:1', paramCacheDir: '/p', partitionWorkers: 2 });
    expect(text).toMatch(/^\[daemon\]\nlisten = "0\.0\.0\.0:1"$/m);
    expect(text).toMatch(/^\[srs\]\nparam_cache = "\/p"$/m);
    expect(text).toMatch(/^\[synthesis\]\npartition_workers = 2$/m);
  });

  it('the simulator refuses a config the daemon could not use, naming the key', () => {
    const noWorkers = write('bad.toml', '[daemon]\nlisten = "a:1"\n[srs]\nparam_cache = "/p"\n[synthesis]\n');
    expect(() => readDaemonConfig(noWorkers)).toThrow(/synthesis\.partition_workers/);
    expect(() => readDaemonConfig(write('broken.toml', '[daemon\nlisten = '))).toThrow(/not valid TOML/);
  });
});
