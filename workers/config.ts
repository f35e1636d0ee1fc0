import { z } from 'zod';
import { TemporalSecuritySchema } from './temporal-connection.js';

const jsonArgv = z.string().transform((s, ctx) => {
  try {
    const v: unknown = JSON.parse(s);
    if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) return v as string[];
  } catch {
    /* reported below */
  }
  ctx.addIssue({ code: 'custom', message: 'must be a JSON array of strings, e.g. ["cuzk-daemon"]' });
  return z.NEVER;
});

/** Compose passes `${VAR:-}` as an empty string: that means unset, not an invalid value. */
const unsetIfEmpty = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema);

const temporal = {
  ...TemporalSecuritySchema.shape,
  TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  /** host:port for the Prometheus exporter; off when unset. */
  METRICS_BIND: z
    .string()
    .regex(/^[^:]+:\d+$/, 'must be host:port, e.g. 0.0.0.0:9464')
    .optional(),
};

/** Control worker: holds the Vast key and the database; runs workflows, Vast and store activities. */
export const ControlConfigSchema = z.object({
  ...temporal,
  DATABASE_URL: z.string().url(),
  VAST_API_URL: z.string().url().default('https://console.vast.ai'),
  VAST_API_KEY: z.string().min(1),
  /** What a rented host should dial to reach Temporal (often differs from the control worker's own). */
  HOST_TEMPORAL_ADDRESS: z.string().min(1).optional(),
  /**
   * What a rented host gets to reach Temporal, passed in the instance's env (never in history): a
   * namespace-scoped worker API key, and the payload keys it needs to read its own activity inputs.
   */
  HOST_TEMPORAL_API_KEY: z.string().min(1).optional(),
  HOST_PAYLOAD_KEYS: z.string().min(1).optional(),
  HOST_PAYLOAD_KEY_ID: z.string().min(1).optional(),
  VAST_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(10_000),
  /** A Vast call that has not answered by then is abandoned and retried (creates are idempotent by label); default 30 s. */
  VAST_REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().optional(),
  /** Queue the control worker polls (default gpu-fleet-control); the CLI reads the same variable to start workflows. */
  CONTROL_TASK_QUEUE: z.string().min(1).optional(),
  /** Where kill/promote/DestroyFailed/budget/orphan notifications go (Slack-compatible); off when unset. */
  NOTIFY_WEBHOOK_URL: unsetIfEmpty(z.string().url().optional()),
  /** Signs each notification (HMAC-SHA256, docs/observability.md); never sent itself. */
  NOTIFY_WEBHOOK_SECRET: unsetIfEmpty(z.string().min(16, 'must be at least 16 characters').optional()),
  /** How often the fleet totals (spend, rate, instances) are read from the store for /metrics; default 15 s. */
  FLEET_METRICS_INTERVAL_MS: z.coerce.number().int().positive().optional(),
});
export type ControlConfig = z.infer<typeof ControlConfigSchema>;

/** GPU-host worker: knows only its own queue and its local daemon; no Vast key, no database. */
export const GpuHostConfigSchema = z.object({
  ...temporal,
  HOST_TASK_QUEUE: z.string().min(1),
  CUZK_ADDRESS: z.string().min(1).default('127.0.0.1:9820'),
  CUZK_DAEMON_CMD: jsonArgv.default(['cuzk-daemon']),
  PARAMFETCH_CMD: jsonArgv.default(['curio', 'fetch-params', '32GiB']),
  /** What proves for real once the host is promoted (fed to the same daemon). */
  PRODUCTION_CMD: jsonArgv.default(['curio', 'run', '--layers', 'gpu']),
  PARAM_CACHE_DIR: z.string().min(1).default('/var/tmp/filecoin-proof-parameters'),
  WORK_DIR: z.string().min(1).default('/var/lib/gpu-host'),
  C1_PATH: z.string().min(1).default('/data/32gbench/c1.json'),
  MINER_ID: z.coerce.number().int().nonnegative().default(1000),
  /**
   * Longest gap between progress heartbeats of a long activity (the SDK also keeps it under 0.8 x the
   * workflow's heartbeat timeout). Cancellation reaches the host only with a heartbeat's reply, so this
   * bounds how late a benchmark sees its timer; each heartbeat is a write on the Temporal server.
   */
  HEARTBEAT_THROTTLE_SEC: z.coerce.number().positive().max(600).default(20),
});
export type GpuHostConfig = z.infer<typeof GpuHostConfigSchema>;

/** Parses the environment or throws one message naming every bad variable. */
export function loadConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const res = schema.safeParse(env);
  if (res.success) return res.data;
  const lines = res.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
  throw new Error(`invalid configuration:\n${lines.join('\n')}`);
}

/** Vast caps each env entry of a create at 256 characters (create_instance.yaml x-input-validation). */
export const VAST_ENV_ENTRY_MAX_CHARS = 256;

/**
 * What a rented host gets in its environment: only what its own worker needs to poll its queue, no Vast
 * key, no database. Vast shows a container's env to the host's operator (and in `extra_env`), so every
 * value here is readable by whoever runs the machine.
 */
export function hostEnvFromConfig(cfg: ControlConfig): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: cfg.HOST_TEMPORAL_ADDRESS ?? cfg.TEMPORAL_ADDRESS,
    TEMPORAL_NAMESPACE: cfg.TEMPORAL_NAMESPACE,
    ...(cfg.HOST_TEMPORAL_API_KEY ? { TEMPORAL_API_KEY: cfg.HOST_TEMPORAL_API_KEY } : {}),
    ...(cfg.HOST_PAYLOAD_KEYS ? { PAYLOAD_KEYS: cfg.HOST_PAYLOAD_KEYS } : {}),
    ...(cfg.HOST_PAYLOAD_KEY_ID ? { PAYLOAD_KEY_ID: cfg.HOST_PAYLOAD_KEY_ID } : {}),
  };
}

/** Where each host env entry comes from, so a refusal names the variable the operator set. */
const HOST_ENV_SOURCE: Record<string, string> = {
  TEMPORAL_ADDRESS: 'HOST_TEMPORAL_ADDRESS (or TEMPORAL_ADDRESS)',
  TEMPORAL_NAMESPACE: 'TEMPORAL_NAMESPACE',
  TEMPORAL_API_KEY: 'HOST_TEMPORAL_API_KEY',
  PAYLOAD_KEYS: 'HOST_PAYLOAD_KEYS',
  PAYLOAD_KEY_ID: 'HOST_PAYLOAD_KEY_ID',
};

/**
 * Refuses, at start-up, any host env entry Vast would reject at every create (one `KEY=value` entry
 * over 256 characters), naming the variable and the limit, instead of failing every rental later.
 */
export function checkHostEnv(env: Record<string, string>): void {
  const bad = Object.entries(env)
    .filter(([k, v]) => k.length + 1 + v.length > VAST_ENV_ENTRY_MAX_CHARS)
    .map(
      ([k, v]) =>
        `  ${HOST_ENV_SOURCE[k] ?? k}: becomes the host env entry ${k}=... of ${k.length + 1 + v.length} characters; ` +
        `Vast accepts at most ${VAST_ENV_ENTRY_MAX_CHARS} per entry (give hosts a short key: one namespace-scoped worker key, one payload key id)`,
    );
  if (bad.length > 0) throw new Error(`invalid configuration:\n${bad.join('\n')}`);
}
