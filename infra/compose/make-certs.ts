import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeClusterCerts } from '../temporal/certs.js';

/**
 * A throwaway PKI for trying the compose stack (30 days): `npx tsx infra/compose/make-certs.ts` writes
 * infra/compose/tls/ with the file names docker-compose.yml mounts. In production, put your own CA's
 * certificates there under the same names (the hosts' front with a publicly trusted one).
 */
const dir = fileURLToPath(new URL('./tls', import.meta.url));
mkdirSync(dir, { recursive: true });
const work = path.join(dir, '.work');
mkdirSync(work, { recursive: true });
const c = makeClusterCerts(work, { serverNames: ['temporal', 'localhost'], days: 30 });
const out = (name: string, ...files: string[]) =>
  writeFileSync(path.join(dir, name), files.map((f) => readFileSync(f, 'utf8')).join(''), { mode: 0o644 });
copyFileSync(c.caFile, path.join(dir, 'ca.pem'));
out('frontend.pem', c.server.certFile);
out('frontend.key', c.server.keyFile);
out('internode.pem', c.internode.certFile);
out('internode.key', c.internode.keyFile);
out('control.pem', c.control.certFile);
out('control.key', c.control.keyFile);
// HAProxy reads a certificate and its key from one file.
out('host-front-bundle.pem', c.hostFront.certFile, c.hostFront.keyFile);
out('host-front-client-bundle.pem', c.hostFront.clientCertFile, c.hostFront.clientKeyFile);
console.log(
  `wrote ${dir} (CA valid 30 days; control subject ${c.control.subject}, system worker ${c.internode.subject})`,
);
