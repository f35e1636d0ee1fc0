import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

/** The certificates a cluster run here needs, all from one throwaway CA made by openssl. */
export interface ClusterCerts {
  dir: string;
  caFile: string;
  /** The Temporal frontend's certificate and key (mTLS server). */
  server: { certFile: string; keyFile: string };
  /**
   * The control plane's client certificate: control worker, CLI, and the server's own system worker; its
   * common name is what the server's authorizer takes for the control plane (GPU_FLEET_CONTROL_SUBJECTS).
   */
  control: { certFile: string; keyFile: string; subject: string };
  /** The host front: its server certificate for hosts, and its client certificate for the frontend. */
  hostFront: { certFile: string; keyFile: string; clientCertFile: string; clientKeyFile: string };
  /** The name clients verify in the server certificates. */
  serverName: string;
}

const SERVER_NAME = 'localhost';
const CONTROL_SUBJECT = 'gpu-fleet-control';

/** Writes a CA and its leaf certificates into `dir` (EC P-256, one day: enough for a run, useless after). */
export function makeClusterCerts(dir: string): ClusterCerts {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const f = (name: string) => path.join(dir, name);
  // genpkey writes PKCS#8, which both rustls (the worker's native connection) and Go read.
  const key = (name: string) =>
    ssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`);
  key('ca');
  ssl('req', '-x509', '-new', '-key', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=gpu-fleet-test-ca');
  const leaf = (name: string, cn: string, usage: 'serverAuth' | 'clientAuth') => {
    key(name);
    ssl('req', '-new', '-key', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    const ext =
      usage === 'serverAuth'
        ? `subjectAltName=DNS:${SERVER_NAME},IP:127.0.0.1\nextendedKeyUsage=serverAuth\n`
        : `extendedKeyUsage=clientAuth\n`;
    writeFileSync(f(`${name}.ext`), ext);
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
      `${name}.ext`,
    );
    return { certFile: f(`${name}.pem`), keyFile: f(`${name}.key`) };
  };
  const server = leaf('server', SERVER_NAME, 'serverAuth');
  const control = { ...leaf('control', CONTROL_SUBJECT, 'clientAuth'), subject: CONTROL_SUBJECT };
  const frontServer = leaf('host-front', SERVER_NAME, 'serverAuth');
  const frontClient = leaf('host-front-client', 'gpu-fleet-host-front', 'clientAuth');
  return {
    dir,
    caFile: f('ca.pem'),
    server,
    control,
    hostFront: {
      ...frontServer,
      clientCertFile: frontClient.certFile,
      clientKeyFile: frontClient.keyFile,
    },
    serverName: SERVER_NAME,
  };
}
