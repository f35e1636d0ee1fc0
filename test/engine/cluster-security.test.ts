import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPromoted } from '../helpers/expect-promoted.js';
import { mintHostToken } from '../../activities/vast/host-token.js';
import { connectionOptions } from '../../workers/setup/temporal-connection.js';
import { CONTROL_TASK_QUEUE } from '../../workflows/domain/task-queues.js';
import { instanceLifecycle } from '../../workflows/index.js';
import { cancelAndWait } from '../helpers/cancel-and-wait.js';
import { expectCleanedUp } from '../helpers/expect-kill.js';
import { fastRequest, startFleetEnv } from '../helpers/fleet-env.js';
import { simOffer } from '../helpers/offers.js';
import { startTestCluster, type TestCluster } from './cluster-fixture.js';

/**
 * The two-node cluster's doors: the control plane's mTLS reaches the server's own frontends (through the
 * front's TCP pass-through, and directly), and nothing without a client certificate gets in; a rented
 * host gets in with its own token through the host listener, and our authorizer in the server lets it
 * reach only its own queue and its own lifecycle's activity tasks (docs/security.md).
 */
let t: TestCluster;
beforeAll(async () => {
  t = await startTestCluster('cl_sec');
});
afterAll(async () => t?.stop());

const GRPC = { NOT_FOUND: 5, PERMISSION_DENIED: 7, RESOURCE_EXHAUSTED: 8, UNAUTHENTICATED: 16 } as const;

// Refusals end in a failed handshake or an error status, not in silence: 3 s is ample on localhost.
async function systemInfo(opts: Parameters<typeof Connection.connect>[0]): Promise<string> {
  const conn = await Connection.connect({ connectTimeout: 3000, ...opts });
  try {
    return (await conn.workflowService.getSystemInfo({})).serverVersion ?? '';
  } finally {
    await conn.close();
  }
}

/** A host token for this cluster's namespace, as the rent activity mints one (an hour's validity). */
function hostToken(label: string, workflowId: string, expiresAtSec = Math.floor(Date.now() / 1000) + 3600): string {
  return mintHostToken(t.hostTokenKey, { namespace: 'default', label, workflowId, expiresAtSec });
}

function grpcCode(err: unknown): number | undefined {
  const e = err as { code?: number; cause?: { code?: number } };
  return e.code ?? e.cause?.code;
}

/** What a host trusts the front's certificate with (our CA here; a public one in a deployment). */
const hostTls = () => ({
  serverRootCACertificate: readFileSync(t.cluster.certs.caFile),
  serverNameOverride: t.cluster.certs.serverName,
});
/** 'allowed', or the gRPC status code the call was refused with. */
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'allowed',
    (e: unknown) => grpcCode(e),
  );

describe('a two-node cluster', () => {
  it('is two server processes in one membership on one store', async () => {
    const [a, b] = t.cluster.nodes;
    expect(a && b && a.pid !== b.pid && a.address !== b.address).toBe(true);
    const members = await t.liveMembers();
    for (const role of ['frontend', 'history', 'matching', 'worker']) {
      expect(members[role], `${role} members`).toHaveLength(2);
    }
  });
});

describe('the control plane: mTLS to the server frontend', () => {
  it('connects with TEMPORAL_TLS_* through the front and to each node directly', async () => {
    const addresses = [t.cluster.front.controlAddress, ...t.cluster.nodes.map((n) => n.address)];
    for (const address of addresses) {
      expect(await systemInfo(connectionOptions(address, t.controlSecurity)), address).toBe('1.29.1');
    }
    const native = await NativeConnection.connect(connectionOptions(t.cluster.front.controlAddress, t.controlSecurity));
    await native.close();
  });

  it('is refused without a client certificate, and in plaintext', async () => {
    const { TEMPORAL_TLS_CA, TEMPORAL_TLS_SERVER_NAME } = t.controlSecurity;
    for (const address of [t.cluster.front.controlAddress, t.cluster.nodes[0]!.address]) {
      await expect(
        systemInfo(connectionOptions(address, { TEMPORAL_TLS_CA, TEMPORAL_TLS_SERVER_NAME })),
      ).rejects.toThrow();
      await expect(systemInfo({ address })).rejects.toThrow();
      // The hosts' API key is no way in on the control side: the server wants a certificate.
      await expect(
        systemInfo(
          connectionOptions(address, {
            TEMPORAL_TLS_CA,
            TEMPORAL_TLS_SERVER_NAME,
            TEMPORAL_API_KEY: hostToken('gpufleet-sec-a', 'instance-offer-1'),
          }),
        ),
      ).rejects.toThrow();
    }
  });

  it('serves the operator CLI configured by TEMPORAL_TLS_*, and refuses it without', async () => {
    const run = (extra: Record<string, string>) =>
      promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', 'workers/cli.ts', 'status', 'no-such-lifecycle', '--json'],
        {
          env: { ...process.env, TEMPORAL_ADDRESS: t.cluster.front.controlAddress, ...extra },
        },
      ).then(
        (r) => ({ code: 0, err: r.stderr }),
        (e: { code: number; stderr: string }) => ({ code: e.code, err: e.stderr }),
      );
    const tlsEnv = Object.fromEntries(Object.entries(t.controlSecurity).filter((e): e is [string, string] => !!e[1]));
    // Through mTLS the server answers: the lifecycle does not exist.
    const ok = await run(tlsEnv);
    expect(ok.err).toMatch(/no-such-lifecycle/);
    expect(ok.err).not.toMatch(/connect|TLS|handshake/i);
    const refused = await run({});
    expect(refused.code).not.toBe(0);
    expect(refused.err).not.toMatch(/no-such-lifecycle.*not found/i);
  });
});

describe('rented hosts: a token per rental through the host listener', () => {
  const mine = () => hostToken('gpufleet-sec-a', 'instance-offer-1');

  it('lets a worker connection in with its token', async () => {
    const address = t.cluster.front.hostAddress;
    expect(await systemInfo({ address, apiKey: mine(), tls: hostTls() })).toBe('1.29.1');
    const native = await NativeConnection.connect({ address, apiKey: mine(), tls: hostTls() });
    await native.close();
  });

  it('refuses no token at the front, and a forged, expired or shared key at the server', async () => {
    const address = t.cluster.front.hostAddress;
    expect(await refusal(systemInfo({ address, tls: hostTls() }))).toBe(GRPC.UNAUTHENTICATED);
    const forged = mintHostToken('a-key-that-is-not-the-cluster-one-0123456789', {
      namespace: 'default',
      label: 'gpufleet-sec-a',
      workflowId: 'instance-offer-1',
      expiresAtSec: Math.floor(Date.now() / 1000) + 3600,
    });
    const expired = hostToken('gpufleet-sec-a', 'instance-offer-1', Math.floor(Date.now() / 1000) - 1);
    for (const apiKey of [forged, expired, 'a-shared-host-key-of-old']) {
      expect(await refusal(systemInfo({ address, apiKey, tls: hostTls() })), apiKey).toBe(GRPC.PERMISSION_DENIED);
    }
    await expect(NativeConnection.connect({ address, apiKey: forged, tls: hostTls() })).rejects.toThrow();
  });

  it('refuses every call a GPU-host worker does not make, with PERMISSION_DENIED', async () => {
    const conn = await Connection.connect({ address: t.cluster.front.hostAddress, apiKey: mine(), tls: hostTls() });
    try {
      const calls = [
        () => conn.workflowService.listWorkflowExecutions({ namespace: 'default' }),
        () => conn.workflowService.startWorkflowExecution({ namespace: 'default', workflowId: 'x', requestId: 'x' }),
        () =>
          conn.workflowService.terminateWorkflowExecution({
            namespace: 'default',
            workflowExecution: { workflowId: 'x' },
          }),
        () =>
          conn.workflowService.pollWorkflowTaskQueue({
            namespace: 'default',
            taskQueue: { name: 'gpu-fleet-control' },
          }),
        () => conn.operatorService.listSearchAttributes({ namespace: 'default' }),
      ];
      for (const call of calls) expect(await refusal(call()), String(call)).toBe(GRPC.PERMISSION_DENIED);
    } finally {
      await conn.close();
    }
  });

  // These calls pass the front's list; only the server's authorizer tells one host's token from another's.
  it('refuses polling the control queue or another host’s queue, in the server', async () => {
    const conn = await Connection.connect({ address: t.cluster.front.hostAddress, apiKey: mine(), tls: hostTls() });
    try {
      for (const queue of [CONTROL_TASK_QUEUE, 'host/gpufleet-sec-b']) {
        const poll = conn.workflowService.pollActivityTaskQueue({ namespace: 'default', taskQueue: { name: queue } });
        expect(await refusal(poll), queue).toBe(GRPC.PERMISSION_DENIED);
      }
      // Its own queue in another namespace is not its own queue either.
      const elsewhere = conn.workflowService.pollActivityTaskQueue({
        namespace: 'other',
        taskQueue: { name: 'host/gpufleet-sec-a' },
      });
      expect(await refusal(elsewhere)).toBe(GRPC.PERMISSION_DENIED);
    } finally {
      await conn.close();
    }
  });

  // As if the front let everything through: the token meets the server directly, with the front's certificate.
  it('refuses starting, signalling and cancelling workflows in the server too, past the front', async () => {
    const { hostFront } = t.cluster.certs;
    const conn = await Connection.connect({
      address: t.cluster.nodes[0]!.address,
      apiKey: mine(),
      tls: {
        ...hostTls(),
        clientCertPair: { crt: readFileSync(hostFront.clientCertFile), key: readFileSync(hostFront.clientKeyFile) },
      },
    });
    try {
      const ns = 'default';
      const wf = { workflowId: 'instance-offer-1' };
      const calls = [
        () =>
          conn.workflowService.startWorkflowExecution({
            namespace: ns,
            workflowId: 'x',
            workflowType: { name: 'instanceLifecycle' },
            taskQueue: { name: CONTROL_TASK_QUEUE },
            requestId: 'x',
          }),
        () => conn.workflowService.signalWorkflowExecution({ namespace: ns, workflowExecution: wf, signalName: 's' }),
        () => conn.workflowService.requestCancelWorkflowExecution({ namespace: ns, workflowExecution: wf }),
        () => conn.workflowService.getWorkflowExecutionHistory({ namespace: ns, execution: wf }),
        () => conn.workflowService.respondActivityTaskCompletedById({ namespace: ns, ...wf, activityId: '1' }),
      ];
      for (const call of calls) expect(await refusal(call()), String(call)).toBe(GRPC.PERMISSION_DENIED);
      // The front's certificate without a token is nobody.
      const bare = await Connection.connect({
        address: t.cluster.nodes[0]!.address,
        tls: {
          ...hostTls(),
          clientCertPair: { crt: readFileSync(hostFront.clientCertFile), key: readFileSync(hostFront.clientKeyFile) },
        },
      });
      try {
        expect(await refusal(bare.workflowService.describeNamespace({ namespace: ns }))).toBe(GRPC.PERMISSION_DENIED);
      } finally {
        await bare.close();
      }
    } finally {
      await conn.close();
    }
  });

  it(
    'a lifecycle’s host, given its own token by the rent, runs its host steps to promotion; the token is in no history',
    { timeout: 300_000 },
    async () => {
      const offer = simOffer({ host: { proofSec: 400 } });
      const fleet = await startFleetEnv([offer], {
        temporalAddress: t.cluster.front.controlAddress,
        temporalTls: t.controlTls,
        security: { ...t.controlSecurity, ...t.hostSettings },
      });
      const id = `t-cluster-token-${offer.id}`;
      try {
        await fleet.client.workflow.start(instanceLifecycle, {
          taskQueue: fleet.taskQueue,
          workflowId: id,
          args: [
            fastRequest(offer.id, {
              benchmarkProofs: 4,
              // SIM_TIME_SCALE 0.01: a 400 s proof takes 4 s.
              minRate: 10,
              earlyStopAfterProofs: 0,
              timeouts: { hostConnectSec: 120, paramfetchSec: 120, paramfetchStallSec: 30, daemonReadySec: 60 },
            }),
          ],
          workflowExecutionTimeout: '10 minutes',
        });
        await expectPromoted(fleet.client, id, 240_000);
        const history = JSON.stringify(await fleet.client.workflow.getHandle(id).fetchHistory());
        expect(history).not.toContain('gfh1.');
        expect(history).not.toContain(t.hostTokenKey);
        // Every call the host made was allowed: the authorizer logs each refusal.
        const refusals = t.cluster.nodes
          .map((n) => readFileSync(n.logFile, 'utf8'))
          .join('\n')
          .split('\n')
          .filter((l) => l.includes('authorizer refused') && l.includes(`host:gpufleet-t-cluster-token-${offer.id}`));
        expect(refusals).toEqual([]);
        await cancelAndWait(fleet.client, id);
        expectCleanedUp(fleet, offer.id);
      } finally {
        await fleet.close();
      }
    },
  );
});

/**
 * What a hostile host found with its own token (issue 43), each shown here only where it needs the
 * running cluster (the decisions themselves: infra/temporal/server/hostauth's Go tests).
 */
const control = () => Connection.connect(connectionOptions(t.cluster.front.controlAddress, t.controlSecurity));
// No client-side retry: each refusal is seen as the server gave it.
const hostConn = (apiKey: string) =>
  Connection.connect({ address: t.cluster.front.hostAddress, apiKey, tls: hostTls(), interceptors: [] });

describe('a hostile host', () => {
  it('cannot register a worker deployment: the versioned poll is refused and no system workflow starts', async () => {
    const conn = await hostConn(hostToken('gpufleet-sec-dep', 'instance-offer-7'));
    const ctl = await control();
    try {
      const poll = conn.workflowService.pollActivityTaskQueue({
        namespace: 'default',
        taskQueue: { name: 'host/gpufleet-sec-dep' },
        deploymentOptions: { deploymentName: 'hostile', buildId: 'b1', workerVersioningMode: 2 },
      });
      expect(await refusal(poll)).toBe(GRPC.PERMISSION_DENIED);
      const deployments = await ctl.workflowService.listWorkerDeployments({ namespace: 'default' });
      expect(deployments.workerDeployments.map((d) => d.name)).not.toContain('hostile');
      const sys = ctl.workflowService.describeWorkflowExecution({
        namespace: 'default',
        execution: { workflowId: 'temporal-sys-worker-deployment:hostile' },
      });
      expect(await refusal(sys)).toBe(GRPC.NOT_FOUND);
    } finally {
      await conn.close();
      await ctl.close();
    }
  });

  it('holds only a few polls and its own call rate; another host is not held back', async () => {
    const flood = await hostConn(hostToken('gpufleet-sec-flood', 'instance-offer-8'));
    const other = await hostConn(hostToken('gpufleet-sec-other', 'instance-offer-9'));
    const abort = new AbortController();
    try {
      const polls = Array.from({ length: 12 }, () =>
        refusal(
          flood.withAbortSignal(abort.signal, () =>
            flood.withDeadline(Date.now() + 60_000, () =>
              flood.workflowService.pollActivityTaskQueue({
                namespace: 'default',
                taskQueue: { name: 'host/gpufleet-sec-flood' },
              }),
            ),
          ),
        ),
      );
      // The refusals come at once; the four polls the host may hold stay open.
      await new Promise((r) => setTimeout(r, 3000));
      const settled = await Promise.all(
        polls.map((p) => Promise.race([p, new Promise((r) => setTimeout(() => r('open'), 1))])),
      );
      // Four per token on each frontend the front spreads them over (two nodes here).
      const open = settled.filter((c) => c === 'open').length;
      expect(open, JSON.stringify(settled)).toBeGreaterThanOrEqual(4);
      expect(open, JSON.stringify(settled)).toBeLessThanOrEqual(4 * t.cluster.nodes.length);
      expect(settled.filter((c) => c === GRPC.RESOURCE_EXHAUSTED)).toHaveLength(12 - open);
      const burst = await Promise.all(
        Array.from({ length: 120 }, () => refusal(flood.workflowService.describeNamespace({ namespace: 'default' }))),
      );
      expect(burst.filter((c) => c === GRPC.RESOURCE_EXHAUSTED).length).toBeGreaterThan(0);
      expect(await refusal(other.workflowService.describeNamespace({ namespace: 'default' }))).toBe('allowed');
      const otherPoll = refusal(
        other.withAbortSignal(abort.signal, () =>
          other.withDeadline(Date.now() + 60_000, () =>
            other.workflowService.pollActivityTaskQueue({
              namespace: 'default',
              taskQueue: { name: 'host/gpufleet-sec-other' },
            }),
          ),
        ),
      );
      expect(await Promise.race([otherPoll, new Promise((r) => setTimeout(() => r('open'), 2000))])).toBe('open');
    } finally {
      abort.abort();
      await flood.close();
      await other.close();
    }
  });
});

describe('a hostile host’s token', () => {
  it('is cut off once its rental is in the revoked list, within seconds; a token for ever is refused', async () => {
    const tok = hostToken('gpufleet-sec-retired', 'instance-offer-10');
    const address = t.cluster.front.hostAddress;
    expect(await systemInfo({ address, apiKey: tok, tls: hostTls() })).toBe('1.29.1');
    const conn = await hostConn(tok);
    try {
      expect(await refusal(conn.workflowService.describeNamespace({ namespace: 'default' }))).toBe('allowed');
      writeFileSync(t.cluster.revokedHostsFile, 'gpufleet-sec-retired\n');
      const start = Date.now();
      let code: unknown = 'allowed';
      while (code === 'allowed' && Date.now() - start < 30_000) {
        await new Promise((r) => setTimeout(r, 1000));
        code = await refusal(conn.workflowService.describeNamespace({ namespace: 'default' }));
      }
      expect(code).toBe(GRPC.PERMISSION_DENIED);
      expect(Date.now() - start).toBeLessThan(25_000);
    } finally {
      await conn.close();
    }
    const forever = hostToken('gpufleet-sec-forever', 'instance-offer-11', Number.MAX_SAFE_INTEGER);
    expect(await refusal(systemInfo({ address, apiKey: forever, tls: hostTls() }))).toBe(GRPC.PERMISSION_DENIED);
  });
});

describe('a hostile host at the doors', () => {
  it('opens no stream but health: reflection with the front’s certificate and a junk bearer is refused', async () => {
    const { hostFront } = t.cluster.certs;
    expect(await reflect(hostFront.clientCertFile, hostFront.clientKeyFile, 'Bearer junk')).toBe(
      GRPC.PERMISSION_DENIED,
    );
    expect(await reflect(hostFront.clientCertFile, hostFront.clientKeyFile)).toBe(GRPC.PERMISSION_DENIED);
    expect(await reflect(t.cluster.certs.control.certFile, t.cluster.certs.control.keyFile)).toBe('answered');
  });

  it('is not the control plane with a certificate whose last CN is the control subject', async () => {
    const dir = twoCnCertificate();
    const conn = await Connection.connect({
      address: t.cluster.nodes[0]!.address,
      interceptors: [],
      tls: {
        ...hostTls(),
        clientCertPair: {
          crt: readFileSync(path.join(dir, 'twocn.pem')),
          key: readFileSync(path.join(dir, 'twocn.key')),
        },
      },
    });
    try {
      expect(await refusal(conn.workflowService.describeNamespace({ namespace: 'default' }))).toBe(
        GRPC.PERMISSION_DENIED,
      );
    } finally {
      await conn.close();
    }
  });
});

/** Server reflection's list of services, asked of node 1 with this certificate: answered, or the status code. */
const reflect = (cert: string, key: string, bearer?: string) =>
  new Promise<number | 'answered'>((resolve) => {
    const creds = grpc.credentials.createSsl(
      readFileSync(t.cluster.certs.caFile),
      readFileSync(key),
      readFileSync(cert),
    );
    const client = new grpc.Client(t.cluster.nodes[0]!.address, creds, {
      'grpc.ssl_target_name_override': t.cluster.certs.serverName,
    });
    const md = new grpc.Metadata();
    if (bearer) md.set('authorization', bearer);
    const call = client.makeBidiStreamRequest(
      '/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo',
      (b: Buffer) => b,
      (b: Buffer) => b,
      md,
    );
    call.on('data', () => {
      resolve('answered');
      call.cancel();
    });
    call.on('error', (e: grpc.ServiceError) => resolve(e.code));
    // ServerReflectionRequest{ list_services: "" } (field 7).
    call.write(Buffer.from([0x3a, 0x00]));
    call.on('close', () => client.close());
  });

/** A certificate of the cluster's CA whose subject is /CN=nobody/CN=gpu-fleet-control; returns its directory. */
function twoCnCertificate(): string {
  const dir = t.cluster.certs.dir;
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'twocn.key');
  ssl('req', '-new', '-key', 'twocn.key', '-out', 'twocn.csr', '-subj', '/CN=nobody/CN=gpu-fleet-control');
  writeFileSync(path.join(dir, 'twocn.ext'), 'extendedKeyUsage=clientAuth\n');
  ssl(
    'x509',
    '-req',
    '-in',
    'twocn.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'twocn.pem',
    '-days',
    '1',
    '-extfile',
    'twocn.ext',
  );
  return dir;
}
