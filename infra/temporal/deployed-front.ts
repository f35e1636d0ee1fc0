import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { haproxyConfig } from './front.js';

/**
 * The front as the deployment recipes run it: the same HAProxy config infra/temporal/front.ts writes for
 * the tested cluster, bound on every address, certificates from a mounted directory. Committed as
 * infra/compose/front/haproxy.cfg (one frontend, `temporal:7233`, both listeners) and
 * infra/k8s/host-front/haproxy.cfg (the chart's frontend Service; the control plane dials the Service
 * itself, so only the hosts' listener matters there). `npx tsx infra/temporal/deployed-front.ts`
 * rewrites both; test/security/deploy-recipes.test.ts keeps them in step.
 */
const TLS = '/usr/local/etc/haproxy/tls';
const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));

export const DEPLOYED_FRONTS = {
  compose: { file: root('infra/compose/front/haproxy.cfg'), frontend: 'temporal:7233', serverName: 'temporal' },
  k8s: {
    file: root('infra/k8s/host-front/haproxy.cfg'),
    frontend: 'temporal-frontend.temporal.svc:7233',
    serverName: 'temporal-frontend',
  },
} as const;

export function deployedFrontConfig(where: keyof typeof DEPLOYED_FRONTS): string {
  const d = DEPLOYED_FRONTS[where];
  const header =
    '# Written by infra/temporal/deployed-front.ts from infra/temporal/front.ts (the front the cluster tests run).\n' +
    '# Do not edit: change the generator and run `npx tsx infra/temporal/deployed-front.ts`.\n';
  const config = haproxyConfig(
    {
      frontends: [d.frontend],
      caFile: `${TLS}/ca.pem`,
      serverName: d.serverName,
      hostFront: { certFile: '', keyFile: '', clientCertFile: '', clientKeyFile: '' },
      dir: TLS,
    },
    { control: 7233, hosts: 7443, bind: '0.0.0.0' },
    {
      keyMap: `${TLS}/host-keys.map`,
      frontPem: `${TLS}/host-front-bundle.pem`,
      clientPem: `${TLS}/host-front-client-bundle.pem`,
    },
  );
  return header + config;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  for (const where of Object.keys(DEPLOYED_FRONTS) as Array<keyof typeof DEPLOYED_FRONTS>) {
    writeFileSync(DEPLOYED_FRONTS[where].file, deployedFrontConfig(where));
    console.log(`wrote ${DEPLOYED_FRONTS[where].file}`);
  }
}
