import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { makeClusterCerts } from '../../infra/temporal/certs.js';
import { DEPLOYED_FRONTS, deployedFrontConfig } from '../../infra/temporal/deployed-front.js';

/**
 * What is deployed is what is tested (issue 43): the compose stack and the Helm values run our server
 * build (docker/Dockerfile's temporal-server target), behind the front the cluster tests run, with mTLS
 * and per-rental host tokens, by default. Upstream's image without our authorizer was what they ran.
 */
const read = (p: string) => readFileSync(p, 'utf8');
const Env = z.record(z.string(), z.union([z.string(), z.number()]).transform(String));
const Service = z.object({
  image: z.string().optional(),
  build: z.object({ dockerfile: z.string(), target: z.string() }).partial().optional(),
  environment: Env.optional(),
  volumes: z.array(z.string()).optional(),
  ports: z.array(z.string()).optional(),
  entrypoint: z.array(z.string()).optional(),
});
const compose = z
  .object({ services: z.record(z.string(), Service) })
  .parse(parse(read('infra/compose/docker-compose.yml')));
const svc = (name: string) => {
  const s = compose.services[name];
  if (!s) throw new Error(`no compose service ${name}`);
  return s;
};
const mountOf = (s: z.infer<typeof Service>, volume: string) =>
  s.volumes?.find((v) => v.startsWith(`${volume}:`))?.split(':')[1];

describe('infra/compose/docker-compose.yml', () => {
  it('runs our server build, never upstream’s image without our authorizer', () => {
    const t = svc('temporal');
    expect(t.build).toMatchObject({ dockerfile: 'docker/Dockerfile', target: 'temporal-server' });
    for (const [name, s] of Object.entries(compose.services)) {
      expect(s.image ?? '', name).not.toMatch(/^temporalio\/(server|auto-setup):/);
    }
    expect(read('docker/Dockerfile')).toMatch(/FROM \$\{TEMPORAL_SERVER_IMAGE\} AS temporal-server/);
    expect(read('docker/Dockerfile')).toMatch(/go build [^\n]*\.\/cmd\/server/);
  });

  it('requires mTLS and host tokens, refuses anonymous calls and retired rentals', () => {
    const env = svc('temporal').environment ?? {};
    expect(env).toMatchObject({
      TEMPORAL_TLS_REQUIRE_CLIENT_AUTH: 'true',
      GPU_FLEET_ANONYMOUS: 'deny',
      GPU_FLEET_CONTROL_SUBJECTS: 'gpu-fleet-control,gpu-fleet-internode',
    });
    expect(env.TEMPORAL_TLS_FRONTEND_CERT).toBeTruthy();
    expect(env.TEMPORAL_TLS_CLIENT1_CA_CERT).toBeTruthy();
    expect(env.GPU_FLEET_HOST_TOKEN_KEY).toMatch(/^\$\{GPU_FLEET_HOST_TOKEN_KEY:\?/);
    // The denylist the server reads is the one the exporter writes, on a volume they share.
    const file = env.GPU_FLEET_REVOKED_HOSTS_FILE ?? '';
    const revocations = svc('host-token-revocations');
    expect(mountOf(svc('temporal'), 'revoked-hosts')).toBe(path.posix.dirname(file));
    const written = revocations.environment?.GPU_FLEET_REVOKED_HOSTS_FILE ?? '';
    expect(mountOf(revocations, 'revoked-hosts')).toBe(path.posix.dirname(written));
    expect(path.posix.basename(written)).toBe(path.posix.basename(file));
    expect(revocations.entrypoint).toEqual(['node', 'dist/workers/host-token-revocations-main.js']);
  });

  it('reaches the server only through the front, whose config is the tested one', () => {
    expect(svc('temporal').ports ?? []).toEqual([]);
    const front = svc('temporal-front');
    expect(front.image).toMatch(/^haproxy:/);
    expect(front.volumes).toContain('./front/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro');
    expect(read(DEPLOYED_FRONTS.compose.file)).toBe(deployedFrontConfig('compose'));
    expect(front.ports).toEqual(['7233:7233', '7443:7443']);
  });

  it('gives the control plane a client certificate and hosts their own tokens, never a shared key', () => {
    for (const name of ['control-worker', 'temporal-setup', 'temporal-ui']) {
      expect(svc(name).environment, name).toMatchObject({ TEMPORAL_TLS_SERVER_NAME: 'temporal' });
      expect(svc(name).environment?.TEMPORAL_TLS_CERT, name).toMatch(/control\.pem$/);
    }
    const env = svc('control-worker').environment ?? {};
    expect(env.GPU_FLEET_HOST_TOKEN_KEY).toMatch(/^\$\{GPU_FLEET_HOST_TOKEN_KEY:\?/);
    expect(env).not.toHaveProperty('HOST_TEMPORAL_API_KEY');
    expect(read('infra/compose/temporal-dynamic-config.yaml')).toMatch(
      /frontend\.exposeAuthorizerErrors:\n {2}- value: true/,
    );
  });
});

const Values = z.object({
  server: z.object({
    image: z.object({ repository: z.string(), tag: z.string() }),
    config: z.object({
      tls: z.object({
        frontend: z.object({ server: z.object({ requireClientAuth: z.boolean() }) }),
        internode: z.object({ server: z.object({ requireClientAuth: z.boolean() }) }),
        systemWorker: z.object({ certFile: z.string() }),
      }),
    }),
    additionalEnv: z.array(z.object({ name: z.string(), value: z.string().optional() }).passthrough()),
    sidecarContainers: z.array(z.object({ command: z.array(z.string()) }).passthrough()),
    dynamicConfig: z.record(z.string(), z.unknown()),
    frontend: z.object({ service: z.object({ type: z.string() }) }),
  }),
});

describe('infra/k8s/values.yaml and host-front.yaml', () => {
  const v = Values.parse(parse(read('infra/k8s/values.yaml')));

  it('install our server build with mTLS, our authorizer and the denylist of retired rentals', () => {
    expect(v.server.image.repository).toMatch(/gpu-fleet\/temporal-server$/);
    expect(v.server.config.tls.frontend.server.requireClientAuth).toBe(true);
    expect(v.server.config.tls.internode.server.requireClientAuth).toBe(true);
    const env = Object.fromEntries(v.server.additionalEnv.map((e) => [e.name, e.value ?? 'from a secret']));
    expect(env).toMatchObject({
      GPU_FLEET_HOST_TOKEN_KEY: 'from a secret',
      GPU_FLEET_ANONYMOUS: 'deny',
      GPU_FLEET_CONTROL_SUBJECTS: 'gpu-fleet-control,gpu-fleet-internode',
    });
    expect(env.GPU_FLEET_REVOKED_HOSTS_FILE).toBeTruthy();
    expect(v.server.sidecarContainers.map((c) => c.command.join(' '))).toContain(
      'node dist/workers/host-token-revocations-main.js',
    );
    expect(v.server.dynamicConfig).toHaveProperty('frontend.exposeAuthorizerErrors');
    expect(v.server.frontend.service.type).toBe('ClusterIP');
  });

  it('put the tested front before the frontend Service, the only way in for hosts', () => {
    const docs = parseAllDocuments(read('infra/k8s/host-front.yaml')).map((d) => d.toJS() as unknown);
    const text = JSON.stringify(docs);
    expect(text).toMatch(/"image":"haproxy:/);
    expect(text).toMatch(/"type":"LoadBalancer"/);
    expect(read(DEPLOYED_FRONTS.k8s.file)).toBe(deployedFrontConfig('k8s'));
    expect(deployedFrontConfig('k8s')).toContain(` ${DEPLOYED_FRONTS.k8s.frontend} `);
  });
});

describe('the deployed front', () => {
  it.skipIf(spawnSync('sh', ['-c', 'command -v haproxy']).status !== 0)('is a config HAProxy accepts', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'deployed-front-'));
    const c = makeClusterCerts(dir);
    const bundle = (cert: string, key: string) => read(cert) + read(key);
    writeFileSync(path.join(dir, 'host-front-bundle.pem'), bundle(c.hostFront.certFile, c.hostFront.keyFile));
    writeFileSync(
      path.join(dir, 'host-front-client-bundle.pem'),
      bundle(c.hostFront.clientCertFile, c.hostFront.clientKeyFile),
    );
    const cfg = deployedFrontConfig('compose')
      .replaceAll('/usr/local/etc/haproxy/tls', dir)
      .replaceAll('temporal:7233', '127.0.0.1:7233');
    writeFileSync(path.join(dir, 'haproxy.cfg'), cfg);
    execFileSync('haproxy', ['-c', '-q', '-f', path.join(dir, 'haproxy.cfg')]);
  });
});
