import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { makeClusterCerts } from '../../infra/temporal/certs.js';
import { connectionOptions } from '../../workers/setup/temporal-connection.js';

/**
 * The dev server speaks plaintext, so a TLS terminator that demands client certificates stands in
 * front of it — as an mTLS-enabled frontend would — and the fleet's connection options must pass it.
 * The same options against the Temporal server's own mTLS frontends: test/engine/cluster-security.test.ts.
 */
const dir = mkdtempSync(path.join(os.tmpdir(), 'mtls-'));
// The same throwaway CA and certificates the two-node cluster runs with (server name localhost).
const certs = makeClusterCerts(dir);

let proxy: tls.Server;
let address = '';
beforeAll(async () => {
  const [host, port] = inject('temporalAddress').split(':') as [string, string];
  proxy = tls.createServer(
    {
      key: readFileSync(certs.server.keyFile),
      cert: readFileSync(certs.server.certFile),
      ca: readFileSync(certs.caFile),
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
  TEMPORAL_TLS_CERT: certs.control.certFile,
  TEMPORAL_TLS_KEY: certs.control.keyFile,
  TEMPORAL_TLS_CA: certs.caFile,
  TEMPORAL_TLS_SERVER_NAME: certs.serverName,
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
    expect(() => connectionOptions(address, { TEMPORAL_TLS_CERT: certs.control.certFile })).toThrow(
      'TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together',
    );
  });
});
