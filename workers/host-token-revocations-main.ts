import pg from 'pg';
import { z } from 'zod';
import { loadConfig } from './setup/config.js';
import { exportRevocations } from './setup/host-token-revocations.js';

/**
 * Keeps the Temporal servers' denylist of retired rentals current (workers/setup/host-token-revocations.ts,
 * docs/security.md "Revocation"): one export now, then every REVOCATIONS_INTERVAL_SEC. Needs only read
 * access to the fleet database's instances table and a volume shared with the servers.
 */
const cfg = loadConfig(
  z.object({
    DATABASE_URL: z.string().min(1),
    GPU_FLEET_REVOKED_HOSTS_FILE: z.string().min(1),
    GPU_FLEET_HOST_TOKEN_MAX_DAYS: z.coerce.number().positive().default(92),
    REVOCATIONS_INTERVAL_SEC: z.coerce.number().min(1).max(30).default(15),
  }),
);
const pool = new pg.Pool({ connectionString: cfg.DATABASE_URL, max: 1 });
const o = { file: cfg.GPU_FLEET_REVOKED_HOSTS_FILE, maxTokenDays: cfg.GPU_FLEET_HOST_TOKEN_MAX_DAYS };
let last = -1;
const once = async () => {
  try {
    const n = await exportRevocations(pool, o);
    if (n !== last) console.log(`revoked hosts: ${n} labels in ${o.file}`);
    last = n;
  } catch (err) {
    // The servers keep the list they loaded: a failed export revokes nothing less, only nothing new.
    console.error(`revoked hosts export failed: ${err instanceof Error ? err.message : String(err)}`);
  }
};
await once();
setInterval(() => void once(), cfg.REVOCATIONS_INTERVAL_SEC * 1000);
