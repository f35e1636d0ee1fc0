import { randomUUID } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';

/**
 * The denylist of retired rentals our Temporal servers load (GPU_FLEET_REVOKED_HOSTS_FILE,
 * infra/temporal/server/hostauth/revoked.go): the label of every rental destroyed within the longest
 * token lifetime the servers accept, one a line. A host token cannot be renewed in place (it sits in the
 * instance's env, which Vast fixes at create), so retiring one means the servers refusing it: this file,
 * rewritten every `intervalSec` and reread by each server every 10 s, makes a destroyed rental's token
 * stop working well within a minute of the destroy being recorded.
 */
export interface RevocationExport {
  /** Where the servers read it (a volume they share with this process). */
  file: string;
  /** GPU_FLEET_HOST_TOKEN_MAX_DAYS of the servers: older rentals' tokens have expired anyway. */
  maxTokenDays: number;
}

/** Labels of rentals destroyed within `maxTokenDays`, oldest first (a stable file for an unchanged list). */
export async function retiredLabels(db: Pick<pg.Pool, 'query'>, maxTokenDays: number): Promise<string[]> {
  const r = await db.query<{ label: string }>(
    `SELECT label FROM instances
      WHERE label IS NOT NULL AND destroyed_at IS NOT NULL
        AND destroyed_at > now() - make_interval(days => $1)
      ORDER BY destroyed_at, label`,
    [Math.ceil(maxTokenDays)],
  );
  return r.rows.map((row) => row.label);
}

/** The file's text: a header, then one label a line (a label never holds a newline: the token refuses one). */
export function revokedHostsText(labels: readonly string[], at: Date): string {
  const lines = labels.filter((l) => l !== '' && !/[\r\n]/.test(l));
  const header = `# gpu-fleet retired rentals: their host tokens are refused. ${lines.length} labels, ${at.toISOString()}\n`;
  return header + lines.map((l) => `${l}\n`).join('');
}

/** Writes the list beside the file and renames it over: a server never reads half a list. */
export async function exportRevocations(db: Pick<pg.Pool, 'query'>, o: RevocationExport): Promise<number> {
  const labels = await retiredLabels(db, o.maxTokenDays);
  const partial = path.join(path.dirname(o.file), `.${path.basename(o.file)}.${randomUUID()}`);
  writeFileSync(partial, revokedHostsText(labels, new Date()), { mode: 0o644 });
  renameSync(partial, o.file);
  return labels.length;
}
