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
  /**
   * A server certificate that is also a client one (CN gpu-fleet-internode): internode mTLS in upstream's
   * image, whose system worker presents it to the frontend (so it is a control subject there).
   */
  internode: { certFile: string; keyFile: string; subject: string };
  /** The name clients verify in the server certificates. */
  serverName: string;
}

export interface CertOptions {
  /** DNS names of the server certificates, the first the one clients verify (default localhost). */
  serverNames?: string[];
  /** Validity (default one day: enough for a run, useless after). */
  days?: number;
}

const SERVER_NAME = 'localhost';
const CONTROL_SUBJECT = 'gpu-fleet-control';
const INTERNODE_SUBJECT = 'gpu-fleet-internode';

/** Writes a CA and its leaf certificates into `dir` (EC P-256). */
export function makeClusterCerts(dir: string, opts: CertOptions = {}): ClusterCerts {
  const names = opts.serverNames ?? [SERVER_NAME];
  const days = String(opts.days ?? 1);
  const san = `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')},IP:127.0.0.1`;
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const f = (name: string) => path.join(dir, name);
  // genpkey writes PKCS#8, which both rustls (the worker's native connection) and Go read.
  const key = (name: string) =>
    ssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`);
  key('ca');
  ssl('req', '-x509', '-new', '-key', 'ca.key', '-out', 'ca.pem', '-days', days, '-subj', '/CN=gpu-fleet-test-ca');
  const leaf = (name: string, cn: string, usage: 'serverAuth' | 'clientAuth' | 'serverAuth,clientAuth') => {
    key(name);
    ssl('req', '-new', '-key', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    const ext = usage === 'clientAuth' ? `extendedKeyUsage=clientAuth\n` : `${san}\nextendedKeyUsage=${usage}\n`;
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
      days,
      '-extfile',
      `${name}.ext`,
    );
    return { certFile: f(`${name}.pem`), keyFile: f(`${name}.key`) };
  };
  const server = leaf('server', SERVER_NAME, 'serverAuth');
  const control = { ...leaf('control', CONTROL_SUBJECT, 'clientAuth'), subject: CONTROL_SUBJECT };
  const frontServer = leaf('host-front', SERVER_NAME, 'serverAuth');
  const frontClient = leaf('host-front-client', 'gpu-fleet-host-front', 'clientAuth');
  const internode = { ...leaf('internode', INTERNODE_SUBJECT, 'serverAuth,clientAuth'), subject: INTERNODE_SUBJECT };
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
    internode,
    serverName: names[0] ?? SERVER_NAME,
  };
}
