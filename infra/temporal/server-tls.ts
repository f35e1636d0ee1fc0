import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/client';

/**
 * mTLS on the Temporal server's own frontend: the server's certificate, the CA whose client certificates
 * it accepts, and the client certificate its system worker (and this harness's setup calls) present.
 * Internode traffic (history, matching) stays on the membership network; see docs/production-engine.md.
 */
export interface FrontendTls {
  caFile: string;
  certFile: string;
  keyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
  /** Common names of the control plane's client certificates (clientCertFile's among them): the server's authorizer lets them do anything. */
  controlSubjects: string[];
  /** The name in the server certificate that clients verify. */
  serverName: string;
}

/** The static config's `global.tls` section. */
export function frontendTlsConfig(t: FrontendTls): Record<string, unknown> {
  return {
    frontend: {
      server: { certFile: t.certFile, keyFile: t.keyFile, requireClientAuth: true, clientCaFiles: [t.caFile] },
      client: { serverName: t.serverName, rootCaFiles: [t.caFile] },
    },
    // The system worker (schedules, batch operations) dials the frontend like any client: it needs a certificate.
    systemWorker: {
      certFile: t.clientCertFile,
      keyFile: t.clientKeyFile,
      client: { serverName: t.serverName, rootCaFiles: [t.caFile] },
    },
  };
}

/** Client options for the harness's own calls (readiness, namespace, search attributes). */
export function tlsConnectionOptions(t: FrontendTls): TLSConfig {
  return {
    serverNameOverride: t.serverName,
    serverRootCACertificate: readFileSync(t.caFile),
    clientCertPair: { crt: readFileSync(t.clientCertFile), key: readFileSync(t.clientKeyFile) },
  };
}
