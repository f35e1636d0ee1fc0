import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectionOptions } from '../../workers/setup/temporal-connection.js';

/**
 * The dev server speaks plaintext, so a TLS terminator that demands client certificates stands in
 * front of it — as an mTLS-enabled frontend would — and the fleet's connection options must pass it.
 * The same options against the Temporal server's own mTLS frontends: test/engine/cluster-security.test.ts.
 */
const dir = mkdtempSync(path.join(os.tmpdir(), 'mtls-'));
const f = (name: string) => path.join(dir, name);
const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

function makeCerts(): void {
  ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '1',
    '-subj',
    '/CN=test-ca',
  );
  for (const [name, cn] of [
    ['server', 'localhost'],
    ['client', 'gpu-fleet-control'],
  ] as const) {
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    const ext = f(`${name}.ext`);
    execFileSync('sh', ['-c', `printf 'subjectAltName=DNS:${cn}\\n' > ${ext}`]);
    ssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '1',
      '-extfile',
      ext,
    );
  }
}

let proxy: tls.Server;
let address = '';
beforeAll(async () => {
  makeCerts();
  const [host, port] = inject('temporalAddress').split(':') as [string, string];
  proxy = tls.createServer(
    {
      key: readFileSync(f('server.key')),
      cert: readFileSync(f('server.pem')),
      ca: readFileSync(f('ca.pem')),
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: ['h2'],
    },
    (socket) => {
      const upstream = net.connect(Number(port), host);
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    },
  );
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const a = proxy.address();
  address = `127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
});
afterAll(() => proxy?.close());

const secure = {
  TEMPORAL_TLS_CERT: f('client.pem'),
  TEMPORAL_TLS_KEY: f('client.key'),
  TEMPORAL_TLS_CA: f('ca.pem'),
  TEMPORAL_TLS_SERVER_NAME: 'localhost',
};

describe('mTLS to Temporal', () => {
  it('connects a client and a worker connection with a client certificate', async () => {
    const conn = await Connection.connect(connectionOptions(address, secure));
    const info = await conn.workflowService.getSystemInfo({});
    expect(info.serverVersion).toBeTruthy();
    await conn.close();
    const native = await NativeConnection.connect(connectionOptions(address, secure));
    await native.close();
  });

  it('is refused without a client certificate', async () => {
    const { TEMPORAL_TLS_CA, TEMPORAL_TLS_SERVER_NAME } = secure;
    await expect(
      (async () => {
        const conn = await Connection.connect({
          ...connectionOptions(address, { TEMPORAL_TLS_CA, TEMPORAL_TLS_SERVER_NAME }),
          connectTimeout: 3000,
        });
        await conn.workflowService.getSystemInfo({});
      })(),
    ).rejects.toThrow();
  });

  it('rejects half a certificate pair with a clear error', () => {
    expect(() => connectionOptions(address, { TEMPORAL_TLS_CERT: f('client.pem') })).toThrow(
      'TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together',
    );
  });
});
