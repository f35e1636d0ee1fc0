import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { z } from 'zod';
import { codecFromEnv } from './codec/aes-gcm-codec.js';

/** Connection security, shared by both workers and the CLI; every path is read from the environment. */
export const TemporalSecuritySchema = z.object({
  /** Client certificate and key for mTLS; both or neither. */
  TEMPORAL_TLS_CERT: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY: z.string().min(1).optional(),
  /** CA that signed the server's certificate (omit to trust the system roots). */
  TEMPORAL_TLS_CA: z.string().min(1).optional(),
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  /** Temporal Cloud / server API key, sent as a bearer token (needs TLS on a real cluster). */
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  /** `id:base64(32 bytes)[,id:base64…]`: enables AES-GCM payload encryption. */
  PAYLOAD_KEYS: z.string().min(1).optional(),
  /** Key id new payloads are encrypted with (default: the last in PAYLOAD_KEYS). */
  PAYLOAD_KEY_ID: z.string().min(1).optional(),
});
export type TemporalSecurity = z.infer<typeof TemporalSecuritySchema>;

type Tls = NonNullable<ConnectionOptions['tls']>;

/** TLS / mTLS options, or undefined for a plaintext local server. */
export function tlsOptions(s: TemporalSecurity): Tls | undefined {
  if (Boolean(s.TEMPORAL_TLS_CERT) !== Boolean(s.TEMPORAL_TLS_KEY)) {
    throw new Error('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together');
  }
  if (!s.TEMPORAL_TLS_CERT && !s.TEMPORAL_TLS_CA && !s.TEMPORAL_API_KEY) return undefined;
  const tls: Tls = {};
  if (s.TEMPORAL_TLS_CA) tls.serverRootCACertificate = readFileSync(s.TEMPORAL_TLS_CA);
  if (s.TEMPORAL_TLS_SERVER_NAME) tls.serverNameOverride = s.TEMPORAL_TLS_SERVER_NAME;
  if (s.TEMPORAL_TLS_CERT && s.TEMPORAL_TLS_KEY) {
    tls.clientCertPair = { crt: readFileSync(s.TEMPORAL_TLS_CERT), key: readFileSync(s.TEMPORAL_TLS_KEY) };
  }
  return tls;
}

/** Options for Connection.connect / NativeConnection.connect. */
export function connectionOptions(
  address: string,
  s: TemporalSecurity,
): { address: string; tls?: Tls; apiKey?: string } {
  const tls = tlsOptions(s);
  return { address, ...(tls ? { tls } : {}), ...(s.TEMPORAL_API_KEY ? { apiKey: s.TEMPORAL_API_KEY } : {}) };
}

/** The data converter every client and worker of the fleet must share (encryption when configured). */
export function dataConverter(s: TemporalSecurity): DataConverter {
  const codec = codecFromEnv(s.PAYLOAD_KEYS, s.PAYLOAD_KEY_ID);
  return codec ? { payloadCodecs: [codec] } : {};
}
