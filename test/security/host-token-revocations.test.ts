import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createStoreActivities } from '../../activities/store/activities.js';
import { exportRevocations, retiredLabels, revokedHostsText } from '../../workers/setup/host-token-revocations.js';
import { machineBlock, recordRental } from '../helpers/store-rentals.js';

/**
 * No revocation (issue 43): a destroyed rental's token polled its dead queue for its 90 days. The
 * exporter lists every rental destroyed within the servers' longest token lifetime for the servers'
 * denylist (infra/temporal/server/hostauth/revoked.go, whose Go tests load such a file and refuse its
 * labels; the cluster test refuses a listed host's calls within seconds).
 */
const machine = machineBlock(730_000_000);
let pool: pg.Pool;
let store: ReturnType<typeof createStoreActivities>;
beforeAll(() => {
  pool = new pg.Pool({ connectionString: inject('databaseUrl'), max: 2 });
  store = createStoreActivities({ pool });
});
afterAll(async () => pool?.end());

async function rental(n: number, destroyedDaysAgo: number | null): Promise<string> {
  const { rentalKey } = await recordRental(store, machine + n, { keyPrefix: 'revoke' });
  if (destroyedDaysAgo !== null) {
    await pool.query(`UPDATE instances SET destroyed_at = now() - make_interval(days => $2) WHERE label = $1`, [
      rentalKey,
      destroyedDaysAgo,
    ]);
  }
  return rentalKey;
}

describe('the revoked-hosts export', () => {
  it('lists every rental destroyed within the longest token lifetime, and no live one', async () => {
    const destroyed = await rental(1, 0);
    const lastMonth = await rental(2, 30);
    const live = await rental(3, null);
    const expired = await rental(4, 200);
    const labels = await retiredLabels(pool, 92);
    expect(labels).toEqual(expect.arrayContaining([destroyed, lastMonth]));
    expect(labels).not.toContain(live);
    expect(labels).not.toContain(expired);

    const file = path.join(mkdtempSync(path.join(tmpdir(), 'revoked-')), 'revoked-hosts');
    const n = await exportRevocations(pool, { file, maxTokenDays: 92 });
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines[0]).toMatch(/^# gpu-fleet retired rentals/);
    expect(lines).toEqual(expect.arrayContaining([destroyed, lastMonth]));
    expect(lines).not.toContain(live);
    expect(lines.filter((l) => l !== '' && !l.startsWith('#'))).toHaveLength(n);
  });

  it('writes one label a line, never a line a label could break', () => {
    expect(revokedHostsText(['a', 'b\nc', '', 'd'], new Date(0))).toBe(
      '# gpu-fleet retired rentals: their host tokens are refused. 2 labels, 1970-01-01T00:00:00.000Z\na\nd\n',
    );
  });
});
