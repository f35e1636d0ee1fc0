import { z } from 'zod';
import { codecFromEnv } from './setup/codec/aes-gcm-codec.js';
import { startCodecServer } from './setup/codec/codec-server.js';
import { loadConfig } from './setup/config.js';

/** Codec server for the Temporal UI: decrypts payloads for operators who present CODEC_TOKEN. */
const cfg = loadConfig(
  z.object({
    PAYLOAD_KEYS: z.string().min(1),
    PAYLOAD_KEY_ID: z.string().min(1).optional(),
    CODEC_TOKEN: z.string().min(16, 'must be at least 16 characters'),
    CODEC_ALLOW_ORIGIN: z.string().url(),
    CODEC_BIND: z
      .string()
      .regex(/^[^:]+:\d+$/)
      .default('127.0.0.1:8888'),
  }),
);
const codec = codecFromEnv(cfg.PAYLOAD_KEYS, cfg.PAYLOAD_KEY_ID);
if (!codec) throw new Error('PAYLOAD_KEYS is required');
const [host, port] = cfg.CODEC_BIND.split(':') as [string, string];
await startCodecServer({
  codec,
  port: Number(port),
  host,
  token: cfg.CODEC_TOKEN,
  allowOrigin: cfg.CODEC_ALLOW_ORIGIN,
});
console.log(`codec server on ${cfg.CODEC_BIND}`);
