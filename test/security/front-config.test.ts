import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeClusterCerts } from '../../infra/temporal/certs.js';
import { apiKeyHash, type FrontOptions, haproxyConfig } from '../../infra/temporal/front.js';

/**
 * The hosts' front in its two modes: before our server build it only asks for a bearer header (the
 * server verifies the token; test/engine/cluster-security.test.ts runs it); before a server without our
 * authorizer it checks a shared key's SHA-256 itself. Both configurations must be ones HAProxy accepts.
 */
const haproxy = spawnSync('sh', ['-c', 'command -v haproxy']).status === 0;

function configFor(hostKeys?: Record<string, string>): { text: string; file: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'front-config-'));
  const certs = makeClusterCerts(dir);
  const files = {
    keyMap: path.join(dir, 'host-keys.map'),
    frontPem: path.join(dir, 'front.pem'),
    clientPem: path.join(dir, 'client.pem'),
  };
  const bundle = (c: string, k: string) => readFileSync(c, 'utf8') + readFileSync(k, 'utf8');
  writeFileSync(files.frontPem, bundle(certs.hostFront.certFile, certs.hostFront.keyFile));
  writeFileSync(files.clientPem, bundle(certs.hostFront.clientCertFile, certs.hostFront.clientKeyFile));
  writeFileSync(
    files.keyMap,
    Object.entries(hostKeys ?? {})
      .map(([n, h]) => `${h} ${n}\n`)
      .join(''),
  );
  const o: FrontOptions = {
    frontends: ['127.0.0.1:7233'],
    caFile: certs.caFile,
    serverName: certs.serverName,
    hostFront: certs.hostFront,
    dir,
    ...(hostKeys ? { hostKeys } : {}),
  };
  const text = haproxyConfig(o, { control: 17001, hosts: 17002 }, files);
  const file = path.join(dir, 'haproxy.cfg');
  writeFileSync(file, text);
  return { text, file };
}

describe('the hosts’ front', () => {
  it('before our server build: a bearer header is required, its check is the server’s', () => {
    const { text, file } = configFor();
    expect(text).toMatch(/deny_status 401 unless \{ req\.hdr\(authorization\) -m reg -i \^Bearer\\ \.\+ \}/);
    expect(text).not.toMatch(/map\(|x-gpu-fleet-host/);
    expect(text).toMatch(/deny_status 403 unless .*PollActivityTaskQueue/);
    if (haproxy) execFileSync('haproxy', ['-c', '-q', '-f', file]);
  });

  it('before a server without our authorizer: the front checks the shared key itself', () => {
    const { text, file } = configFor({ 'gpu-hosts': apiKeyHash('a-shared-key') });
    expect(text).toMatch(/sha2\(256\),hex,lower,map\(.*host-keys\.map\)/);
    expect(text).toMatch(/deny_status 401 unless \{ var\(txn\.host\) -m found \}/);
    if (haproxy) execFileSync('haproxy', ['-c', '-q', '-f', file]);
  });
});
