import { z } from 'zod';
import { instanceLabel, lifecycleWorkflowId, rentalKey } from '../../workflows/domain/task-queues.js';
import {
  DEFAULT_HOST_TOKEN_TTL_DAYS,
  HOST_TOKEN_KEY_MIN_CHARS,
  hostTokenMinter,
  readHostToken,
  type Rental,
} from '../../activities/vast/host-token.js';
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

const controlFields = z.object({
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
  /**
   * With our server build (docs/security.md): the key each rental's host token is signed with, the same
   * as the server's. The rent activity mints a token that reaches only that rental's queue and workflow
   * and passes it as the host's TEMPORAL_API_KEY; instead of HOST_TEMPORAL_API_KEY, not with it.
   */
  GPU_FLEET_HOST_TOKEN_KEY: unsetIfEmpty(
    z.string().min(HOST_TOKEN_KEY_MIN_CHARS, `must be at least ${HOST_TOKEN_KEY_MIN_CHARS} characters`).optional(),
  ),
  /**
   * How long a host token is accepted after the rent, in days (default 90). The watch retires a promoted
   * host an hour before; under a day would retire hosts about as soon as their benchmark promotes them.
   */
  HOST_TOKEN_TTL_DAYS: z.coerce
    .number()
    .min(1, 'must be at least 1 (day): the watch retires a host an hour before its token expires')
    .max(3650)
    .optional(),
  HOST_PAYLOAD_KEYS: z.string().min(1).optional(),
  /**
   * Path, on the host, of the CA that signed the host front's certificate, when it is not publicly
   * trusted (a CA file baked into the image); hosts trust the system roots when unset.
   */
  HOST_TEMPORAL_TLS_CA: z.string().min(1).optional(),
  HOST_PAYLOAD_KEY_ID: z.string().min(1).optional(),
  /** Given to every rented host as FITNESS_SAMPLE_URL: what its fitness gate's download sample reads. */
  HOST_FITNESS_SAMPLE_URL: unsetIfEmpty(z.string().url().optional()),
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

/** Control worker: holds the Vast key and the database; runs workflows, Vast and store activities. */
export const ControlConfigSchema = controlFields.superRefine((cfg, ctx) => {
  if (cfg.GPU_FLEET_HOST_TOKEN_KEY && cfg.HOST_TEMPORAL_API_KEY) {
    ctx.addIssue({
      code: 'custom',
      path: ['HOST_TEMPORAL_API_KEY'],
      message:
        'set GPU_FLEET_HOST_TOKEN_KEY (a token per rental) or HOST_TEMPORAL_API_KEY (one key for all hosts), not both',
    });
  }
});
export type ControlConfig = z.infer<typeof ControlConfigSchema>;

const gpuHostFields = z.object({
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
  /** The fitness gate's GPU and driver probe (docs/operating.md, "Fitness gate"). */
  NVIDIA_SMI_CMD: jsonArgv.default(['nvidia-smi']),
  /** Prints free and total bytes of the parameter cache's filesystem (the path is appended): statfs via df. */
  DISK_FREE_CMD: jsonArgv.default(['df', '--block-size=1', '--output=avail,size']),
  /** Writes and syncs the disk-speed probe (`of=` and `count=` MiB are appended). */
  DISK_WRITE_CMD: jsonArgv.default(['dd', 'if=/dev/zero', 'bs=1M', 'conv=fdatasync', 'status=none']),
  /** What the download-speed sample reads (a Range request); unset: the download is not judged. */
  FITNESS_SAMPLE_URL: unsetIfEmpty(z.string().url().optional()),
  /**
   * Longest gap between progress heartbeats of a long activity (the SDK also keeps it under 0.8 x the
   * workflow's heartbeat timeout). Cancellation reaches the host only with a heartbeat's reply, so this
   * bounds how late a benchmark sees its timer; each heartbeat is a write on the Temporal server.
   */
  HEARTBEAT_THROTTLE_SEC: z.coerce.number().positive().max(600).default(20),
});

/** GPU-host worker: knows only its own queue and its local daemon; no Vast key, no database. */
export const GpuHostConfigSchema = gpuHostFields.superRefine((cfg, ctx) => {
  // A host token the server would refuse for this worker fails here, by name, not as PERMISSION_DENIED polls.
  const token = cfg.TEMPORAL_API_KEY ? readHostToken(cfg.TEMPORAL_API_KEY) : null;
  if (!token) return;
  const issue = (message: string) => ctx.addIssue({ code: 'custom', path: ['TEMPORAL_API_KEY'], message });
  if (`host/${token.label}` !== cfg.HOST_TASK_QUEUE) {
    issue(`is a host token for host/${token.label}, but HOST_TASK_QUEUE is ${cfg.HOST_TASK_QUEUE}`);
  }
  if (token.namespace !== cfg.TEMPORAL_NAMESPACE) {
    issue(`is a host token for namespace ${token.namespace}, but TEMPORAL_NAMESPACE is ${cfg.TEMPORAL_NAMESPACE}`);
  }
  if (token.expiresAtSec * 1000 <= Date.now()) {
    issue(`is a host token that expired at ${new Date(token.expiresAtSec * 1000).toISOString()}`);
  }
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
    ...(cfg.HOST_TEMPORAL_TLS_CA ? { TEMPORAL_TLS_CA: cfg.HOST_TEMPORAL_TLS_CA } : {}),
    ...(cfg.HOST_PAYLOAD_KEYS ? { PAYLOAD_KEYS: cfg.HOST_PAYLOAD_KEYS } : {}),
    ...(cfg.HOST_PAYLOAD_KEY_ID ? { PAYLOAD_KEY_ID: cfg.HOST_PAYLOAD_KEY_ID } : {}),
    ...(cfg.HOST_FITNESS_SAMPLE_URL ? { FITNESS_SAMPLE_URL: cfg.HOST_FITNESS_SAMPLE_URL } : {}),
  };
}

/** Where each host env entry comes from, so a refusal names the variable the operator set. */
const HOST_ENV_SOURCE: Record<string, string> = {
  TEMPORAL_ADDRESS: 'HOST_TEMPORAL_ADDRESS (or TEMPORAL_ADDRESS)',
  TEMPORAL_NAMESPACE: 'TEMPORAL_NAMESPACE',
  TEMPORAL_API_KEY: 'HOST_TEMPORAL_API_KEY',
  TEMPORAL_TLS_CA: 'HOST_TEMPORAL_TLS_CA',
  PAYLOAD_KEYS: 'HOST_PAYLOAD_KEYS',
  PAYLOAD_KEY_ID: 'HOST_PAYLOAD_KEY_ID',
  FITNESS_SAMPLE_URL: 'HOST_FITNESS_SAMPLE_URL',
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

/** The host token is the value of one env entry, `TEMPORAL_API_KEY=<token>`. */
const HOST_TOKEN_MAX_CHARS = VAST_ENV_ENTRY_MAX_CHARS - 'TEMPORAL_API_KEY='.length;

/**
 * What the rent activity mints each rental's host token with (GPU_FLEET_HOST_TOKEN_KEY set), else
 * undefined. Refuses to start when the longest rental our lifecycles make (a 16-digit offer id, a run
 * id) would get a token over Vast's env entry: only the namespace's length can make it so.
 */
export function hostTokenFromConfig(cfg: ControlConfig): ((r: Rental) => string) | undefined {
  if (!cfg.GPU_FLEET_HOST_TOKEN_KEY) return undefined;
  const mint = hostTokenMinter(
    cfg.GPU_FLEET_HOST_TOKEN_KEY,
    cfg.HOST_TOKEN_TTL_DAYS ?? DEFAULT_HOST_TOKEN_TTL_DAYS,
    HOST_TOKEN_MAX_CHARS,
  );
  const workflowId = lifecycleWorkflowId(Number.MAX_SAFE_INTEGER);
  const label = instanceLabel(rentalKey(workflowId, '00000000-0000-0000-0000-000000000000'));
  try {
    mint({ namespace: cfg.TEMPORAL_NAMESPACE, label, workflowId });
  } catch (err) {
    throw new Error(
      `invalid configuration:\n  TEMPORAL_NAMESPACE: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return mint;
}
