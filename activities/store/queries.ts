import type pg from 'pg';
import type { PerfSample } from '../../workflows/domain/policy/predictions.js';
import type { SpendRow } from '../../workflows/domain/policy/spend-report.js';

type Db = Pick<pg.Pool, 'query'>;

/** A rental's cost as the lifecycle counted it (workflows/domain/policy/cost.ts CostFigures). */
export interface RentalCost {
  totalUsd: number;
  beforeVerdictUsd: number;
  productionUsd: number;
  rentedSec: number;
  productionSec: number;
  /** Workflow time of the promotion (ISO), given with a promoted outcome. */
  verdictAt?: string;
}

/** Every record is keyed by its rental; the workflow id (which names the offer) is kept beside it. */
export interface RentalIds {
  rentalKey: string;
  workflowId: string;
}

export interface InstanceRow extends RentalIds {
  offerId: number;
  instanceId: number | null;
  machineId: number | null;
  hostId: number | null;
  gpuName: string | null;
  numGpus: number | null;
  cpuRamMb: number | null;
  dphTotal: number | null;
  label: string | null;
  stage: string;
  /** The bid of an interruptible rental ($/h); null or absent for on-demand. */
  bidDph?: number | null;
  /** Time of the rent (ISO), once rented (see infra/sql/004_cost.sql). */
  rentedAt?: string | null;
}

export async function upsertInstance(db: Db, r: InstanceRow): Promise<void> {
  await db.query(
    `INSERT INTO instances (rental_key, workflow_id, offer_id, instance_id, machine_id, host_id, gpu_name, num_gpus,
                            cpu_ram_mb, dph_total, label, stage, bid_dph, rented_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14::timestamptz)
     ON CONFLICT (rental_key) DO UPDATE SET
       instance_id = COALESCE(EXCLUDED.instance_id, instances.instance_id),
       machine_id = COALESCE(EXCLUDED.machine_id, instances.machine_id),
       host_id = COALESCE(EXCLUDED.host_id, instances.host_id),
       gpu_name = COALESCE(EXCLUDED.gpu_name, instances.gpu_name),
       num_gpus = COALESCE(EXCLUDED.num_gpus, instances.num_gpus),
       cpu_ram_mb = COALESCE(EXCLUDED.cpu_ram_mb, instances.cpu_ram_mb),
       dph_total = COALESCE(EXCLUDED.dph_total, instances.dph_total),
       label = COALESCE(EXCLUDED.label, instances.label),
       bid_dph = COALESCE(EXCLUDED.bid_dph, instances.bid_dph),
       stage = EXCLUDED.stage,
       rented_at = COALESCE(EXCLUDED.rented_at, instances.rented_at),
       updated_at = now()`,
    [
      r.rentalKey,
      r.workflowId,
      r.offerId,
      r.instanceId,
      r.machineId,
      r.hostId,
      r.gpuName,
      r.numGpus,
      r.cpuRamMb,
      r.dphTotal,
      r.label,
      r.stage,
      r.bidDph ?? null,
      r.rentedAt ?? null,
    ],
  );
}

export async function insertEvent(
  db: Db,
  e: RentalIds & { seq: number; stage: string; message: string; details: unknown; at: string },
): Promise<void> {
  await db.query(
    `INSERT INTO lifecycle_events (rental_key, workflow_id, seq, stage, message, details, at)
     VALUES ($1,$2,$3,$4,$5,$6,$7) ON CONFLICT (rental_key, seq) DO NOTHING`,
    [
      e.rentalKey,
      e.workflowId,
      e.seq,
      e.stage,
      e.message,
      e.details === undefined ? null : JSON.stringify(e.details),
      e.at,
    ],
  );
  await db.query('UPDATE instances SET stage = $2, updated_at = now() WHERE rental_key = $1', [e.rentalKey, e.stage]);
}

export async function upsertBenchmark(
  db: Db,
  b: RentalIds & {
    machineId: number;
    gpuName: string;
    numGpus: number;
    requested: number;
    completed: number;
    concurrency: number;
    elapsedMs: number;
    rate: number;
    timings: unknown;
    stoppedEarly: boolean;
    dphTotal: number;
  },
): Promise<void> {
  const inserted = await db.query(
    `INSERT INTO benchmark_results (rental_key, workflow_id, machine_id, gpu_name, num_gpus, requested, completed,
                                    concurrency, elapsed_ms, rate, timings, stopped_early)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12) ON CONFLICT (rental_key) DO NOTHING`,
    [
      b.rentalKey,
      b.workflowId,
      b.machineId,
      b.gpuName,
      b.numGpus,
      b.requested,
      b.completed,
      b.concurrency,
      b.elapsedMs,
      b.rate,
      JSON.stringify(b.timings),
      b.stoppedEarly,
    ],
  );
  // Only the first write of a benchmark moves host_perf, so a retried activity does not count twice (the
  // caller runs this in one transaction, so a write interrupted after the insert leaves neither).
  if (inserted.rowCount === 1) {
    await db.query(
      `INSERT INTO host_perf (machine_id, gpu_name, num_gpus, benchmarks, best_rate, last_rate, last_dph)
       VALUES ($1,$2,$3,1,$4,$4,$5)
       ON CONFLICT (machine_id) DO UPDATE SET benchmarks = host_perf.benchmarks + 1,
         best_rate = GREATEST(host_perf.best_rate, EXCLUDED.best_rate), last_rate = EXCLUDED.last_rate,
         last_dph = EXCLUDED.last_dph, gpu_name = EXCLUDED.gpu_name, num_gpus = EXCLUDED.num_gpus, updated_at = now()`,
      [b.machineId, b.gpuName, b.numGpus, b.rate, b.dphTotal],
    );
  }
  await db.query('UPDATE instances SET bench_rate = $2, updated_at = now() WHERE rental_key = $1', [
    b.rentalKey,
    b.rate,
  ]);
}

/**
 * Records a verdict once; returns false when it was already recorded (a retried write). A promoted
 * instance can still be killed later by its watch.
 */
export async function finishInstance(
  db: Db,
  o: {
    rentalKey: string;
    outcome: string;
    failureType: string | null;
    reason: string;
    destroyed: boolean;
    verdict: 'promote' | 'kill' | 'inconclusive';
    cost?: RentalCost;
  },
): Promise<boolean> {
  const c = o.cost;
  const res = await db.query(
    `UPDATE instances SET outcome = $2, failure_type = $3, reason = $4, stage = $5,
       destroyed_at = CASE WHEN $6 THEN now() ELSE destroyed_at END, verdict = $7, updated_at = now(),
       cost_usd = COALESCE($8, cost_usd), cost_before_verdict_usd = COALESCE($9, cost_before_verdict_usd),
       cost_production_usd = COALESCE($10, cost_production_usd), rented_sec = COALESCE($11, rented_sec),
       production_sec = COALESCE($12, production_sec),
       verdict_at = COALESCE($13::timestamptz, verdict_at)
     WHERE rental_key = $1 AND (outcome IS NULL OR (outcome = 'promoted' AND $2 = 'killed'))`,
    [
      o.rentalKey,
      o.outcome,
      o.failureType,
      o.reason,
      o.outcome === 'promoted' ? 'promoted' : 'killed',
      o.destroyed,
      o.verdict,
      c?.totalUsd ?? null,
      c?.beforeVerdictUsd ?? null,
      c?.productionUsd ?? null,
      c?.rentedSec ?? null,
      c?.productionSec ?? null,
      c?.verdictAt ?? null,
    ],
  );
  return res.rowCount === 1;
}

export async function bumpMachineFailure(db: Db, machineId: number, failureType: string): Promise<number> {
  const res = await db.query<{ count: number }>(
    `INSERT INTO machine_failures (machine_id, failure_type, count) VALUES ($1,$2,1)
     ON CONFLICT (machine_id, failure_type) DO UPDATE SET count = machine_failures.count + 1, last_at = now()
     RETURNING count`,
    [machineId, failureType],
  );
  return res.rows[0]?.count ?? 0;
}

export async function markBad(
  db: Db,
  machineId: number,
  reason: string,
  source: 'rule' | 'operator',
  expiresInSec: number | null = null,
): Promise<void> {
  // A mark is never shortened by a later one: one that stands (an operator's, expires_at NULL) stays, and
  // of two expiring marks the later expiry wins, with its reason.
  const keepOld = `(EXCLUDED.expires_at IS NOT NULL AND (bad_machines.expires_at IS NULL OR bad_machines.expires_at > EXCLUDED.expires_at))`;
  await db.query(
    `INSERT INTO bad_machines (machine_id, reason, source, expires_at)
     VALUES ($1,$2,$3, CASE WHEN $4::double precision IS NULL THEN NULL ELSE now() + $4 * interval '1 second' END)
     ON CONFLICT (machine_id) DO UPDATE SET
       reason = CASE WHEN ${keepOld} THEN bad_machines.reason ELSE EXCLUDED.reason END,
       source = CASE WHEN ${keepOld} THEN bad_machines.source ELSE EXCLUDED.source END,
       expires_at = CASE WHEN ${keepOld} THEN bad_machines.expires_at ELSE EXCLUDED.expires_at END,
       marked_at = now()`,
    [machineId, reason, source, expiresInSec],
  );
}

/** Machines the scaler must not rent: marked, not ignored, and the mark not expired. */
export async function listBadMachineIds(db: Db): Promise<number[]> {
  const res = await db.query<{ machine_id: string }>(
    'SELECT machine_id FROM bad_machines WHERE NOT ignored AND (expires_at IS NULL OR expires_at > now())',
  );
  return res.rows.map((r) => Number(r.machine_id));
}

export type Standing = 'good' | 'probation' | 'bad';

/**
 * Which rental of its offer this is (1 for the first): a lifecycle's workflow id names the offer and is
 * reused by every rent of it, so the number counts the other rentals recorded under that id, plus one.
 */
export async function rentalNumber(db: Db, workflowId: string, rentalKey: string): Promise<number> {
  const res = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM instances WHERE workflow_id = $1 AND rental_key <> $2`,
    [workflowId, rentalKey],
  );
  return Number(res.rows[0]?.n ?? 0) + 1;
}

/** A machine's standing: bad while marked, on probation once an expiring mark has run out, else good. */
export async function machineStanding(
  db: Db,
  machineId: number,
): Promise<{ standing: Standing; reason: string | null; expiresAt: string | null }> {
  const res = await db.query<{ reason: string; ignored: boolean; expires_at: Date | null; active: boolean }>(
    `SELECT reason, ignored, expires_at, (expires_at IS NULL OR expires_at > now()) AS active
     FROM bad_machines WHERE machine_id = $1`,
    [machineId],
  );
  const r = res.rows[0];
  if (!r || r.ignored) return { standing: 'good', reason: null, expiresAt: null };
  return {
    standing: r.active ? 'bad' : 'probation',
    reason: r.reason,
    expiresAt: r.expires_at ? new Date(r.expires_at).toISOString() : null,
  };
}

/**
 * Machines resting after inconclusive verdicts within the window: more than `retries` of a kind a fresh
 * rental may cure (`retryTypes`), or any other (ours, an operator's cancel, the market's) on the machine.
 */
export async function restingMachines(
  db: Db,
  o: { windowSec: number; retries: number; retryTypes: string[] },
): Promise<number[]> {
  const res = await db.query<{ machine_id: string }>(
    `SELECT machine_id FROM instances
     WHERE verdict = 'inconclusive' AND machine_id IS NOT NULL AND updated_at > now() - $1 * interval '1 second'
     GROUP BY machine_id
     HAVING count(*) FILTER (WHERE failure_type = ANY($3::text[])) > $2
         OR count(*) FILTER (WHERE NOT (failure_type = ANY($3::text[]))) > 0`,
    [o.windowSec, o.retries, o.retryTypes],
  );
  return res.rows.map((r) => Number(r.machine_id));
}

/**
 * A machine on probation passed (promoted after a full batch): its expired mark and its failure counts
 * go, so a later transient starts from one again. False when it was not on probation.
 */
export async function passProbation(db: Db, machineId: number): Promise<boolean> {
  const res = await db.query(
    'DELETE FROM bad_machines WHERE machine_id = $1 AND expires_at IS NOT NULL AND expires_at <= now() AND NOT ignored',
    [machineId],
  );
  if (res.rowCount !== 1) return false;
  await db.query('DELETE FROM machine_failures WHERE machine_id = $1', [machineId]);
  return true;
}

export async function insertLogTail(db: Db, ids: RentalIds, source: string, text: string): Promise<void> {
  await db.query(
    `INSERT INTO log_tails (rental_key, workflow_id, source, text) VALUES ($1,$2,$3,$4)
     ON CONFLICT (rental_key, source) DO UPDATE SET text = EXCLUDED.text, at = now()`,
    [ids.rentalKey, ids.workflowId, source, text],
  );
}

export interface FleetRow {
  rentalKey: string;
  workflowId: string;
  offerId: number;
  machineId: number | null;
  outcome: string | null;
  benchRate: number | null;
  dphTotal: number | null;
  /** The bid of an interruptible rental ($/h); null for on-demand. */
  bidDph: number | null;
  /** The rented offer's hardware; null until the lifecycle has rented (what the scaler predicts it by). */
  gpuName: string | null;
  numGpus: number | null;
  cpuRamMb: number | null;
}

/** Instances still rented: promoted ones and lifecycles that have not ended, with their hardware. */
export async function rentedRows(db: Db): Promise<FleetRow[]> {
  const res = await db.query<{
    rental_key: string;
    workflow_id: string;
    offer_id: string;
    machine_id: string | null;
    outcome: string | null;
    bench_rate: number | null;
    dph_total: number | null;
    bid_dph: number | null;
    gpu_name: string | null;
    num_gpus: number | null;
    cpu_ram_mb: string | null;
  }>(`SELECT rental_key, workflow_id, offer_id, machine_id, outcome, bench_rate, dph_total, bid_dph,
             gpu_name, num_gpus, cpu_ram_mb
      FROM instances WHERE destroyed_at IS NULL AND (outcome IS NULL OR outcome = 'promoted')`);
  return res.rows.map((r) => ({
    rentalKey: r.rental_key,
    workflowId: r.workflow_id,
    offerId: Number(r.offer_id),
    machineId: r.machine_id === null ? null : Number(r.machine_id),
    outcome: r.outcome,
    benchRate: r.bench_rate,
    dphTotal: r.dph_total,
    bidDph: r.bid_dph,
    gpuName: r.gpu_name,
    numGpus: r.num_gpus,
    cpuRamMb: r.cpu_ram_mb === null ? null : Number(r.cpu_ram_mb),
  }));
}

/**
 * Each machine's last benchmark with the hardware it ran on: host_perf has no RAM column, so the RAM is the
 * one the machine's latest rental recorded. A machine with no rental that knows its RAM (a row written by
 * hand) is left out: the predictions class a host by its RAM, and a guess would skew its whole model.
 */
export async function perfSamples(db: Db): Promise<PerfSample[]> {
  const res = await db.query<{
    machine_id: string;
    gpu_name: string;
    num_gpus: number;
    last_rate: number;
    cpu_ram_mb: string;
  }>(
    `SELECT p.machine_id, p.gpu_name, p.num_gpus, p.last_rate, ram.cpu_ram_mb
     FROM host_perf p
     JOIN LATERAL (SELECT i.cpu_ram_mb FROM instances i
                   WHERE i.machine_id = p.machine_id AND i.cpu_ram_mb IS NOT NULL
                   ORDER BY i.created_at DESC LIMIT 1) ram ON true
     WHERE p.last_rate IS NOT NULL
     ORDER BY p.machine_id`,
  );
  return res.rows.map((r) => ({
    machineId: Number(r.machine_id),
    gpuName: r.gpu_name,
    numGpus: r.num_gpus,
    cpuRamMb: Number(r.cpu_ram_mb),
    rate: r.last_rate,
  }));
}

export async function setIgnored(db: Db, machineId: number, ignored: boolean): Promise<boolean> {
  const res = await db.query('UPDATE bad_machines SET ignored = $2 WHERE machine_id = $1', [machineId, ignored]);
  return res.rowCount === 1;
}

export async function workflowForLabel(db: Db, label: string): Promise<string | null> {
  const res = await db.query<{ workflow_id: string }>('SELECT workflow_id FROM instances WHERE label = $1 LIMIT 1', [
    label,
  ]);
  return res.rows[0]?.workflow_id ?? null;
}

/**
 * An instance destroyed by the reconciler, found by its label (one rental's; the workflow id may have
 * rented the offer again since): keeps an earlier verdict, otherwise records it as orphaned.
 */
export async function markOrphanDestroyed(db: Db, label: string, reason: string): Promise<void> {
  await db.query(
    `UPDATE instances SET destroyed_at = now(), outcome = COALESCE(outcome, 'killed'),
       failure_type = CASE WHEN outcome = 'killed' THEN failure_type ELSE 'Orphaned' END,
       reason = CASE WHEN outcome = 'killed' THEN reason ELSE $2 END, stage = 'killed', updated_at = now()
     WHERE label = $1`,
    [label, reason],
  );
}

export interface MachineRecord {
  machineId: number;
  reason: string;
  source: 'rule' | 'operator';
  ignored: boolean;
  markedAt: string;
  /** When an expiring (transient) mark runs out; null for a mark that stands. */
  expiresAt: string | null;
}

/** Every machine ever marked bad, ignored ones included (the CLI's `machines list`); newest first. */
export async function machineRecords(db: Db, machineId?: number): Promise<MachineRecord[]> {
  const res = await db.query<{
    machine_id: string;
    reason: string;
    source: 'rule' | 'operator';
    ignored: boolean;
    marked_at: Date;
    expires_at: Date | null;
  }>(
    `SELECT machine_id, reason, source, ignored, marked_at, expires_at FROM bad_machines
     WHERE $1::bigint IS NULL OR machine_id = $1 ORDER BY marked_at DESC, machine_id`,
    [machineId ?? null],
  );
  return res.rows.map((r) => ({
    machineId: Number(r.machine_id),
    reason: r.reason,
    source: r.source,
    ignored: r.ignored,
    markedAt: new Date(r.marked_at).toISOString(),
    expiresAt: r.expires_at ? new Date(r.expires_at).toISOString() : null,
  }));
}

export interface LogTail {
  rentalKey: string;
  source: string;
  text: string;
  at: string;
}

/**
 * The stored log tails (daemon log, benchmark output) of every rental a lifecycle's workflow id has
 * had (an offer rented again reuses the id), newest rental first.
 */
export async function logTailsFor(db: Db, workflowId: string): Promise<LogTail[]> {
  const res = await db.query<{ rental_key: string; source: string; text: string; at: Date }>(
    `SELECT rental_key, source, text, at FROM log_tails WHERE workflow_id = $1
     ORDER BY max(at) OVER (PARTITION BY rental_key) DESC, rental_key, source`,
    [workflowId],
  );
  return res.rows.map((r) => ({
    rentalKey: r.rental_key,
    source: r.source,
    text: r.text,
    at: new Date(r.at).toISOString(),
  }));
}

/** Rentals started since `since`, with what the cost report needs (workflows/domain/policy/spend-report.ts). */
/** What a watched rental's price moved to, with its cost counted up to the move (infra/sql/007_price_moves.sql). */
export interface PriceMove {
  dphTotal: number;
  /** The raised bid of an interruptible rental ($/h); null leaves the recorded bid. */
  bidDph: number | null;
  /** Workflow time (ISO) the cost below is counted to. */
  countedAt: string;
  beforeVerdictUsd: number;
  productionUsd: number;
}

/**
 * The rental's billed price from now on. Idempotent, and an older move (a retried write) never
 * overwrites a newer one; an ended rental keeps the figures its outcome recorded.
 */
export async function recordPriceMove(db: Db, ids: RentalIds, m: PriceMove): Promise<boolean> {
  const res = await db.query(
    `UPDATE instances SET dph_total = $2, bid_dph = COALESCE($3, bid_dph), cost_before_verdict_usd = $4,
       cost_production_usd = $5, cost_counted_at = $6::timestamptz, updated_at = now()
     WHERE rental_key = $1 AND destroyed_at IS NULL AND outcome IS DISTINCT FROM 'killed'
       AND (cost_counted_at IS NULL OR cost_counted_at <= $6::timestamptz)`,
    [ids.rentalKey, m.dphTotal, m.bidDph, m.beforeVerdictUsd, m.productionUsd, m.countedAt],
  );
  return (res.rowCount ?? 0) > 0;
}

export async function spendRows(db: Db, since: string): Promise<SpendRow[]> {
  const res = await db.query<{
    gpu_name: string | null;
    outcome: 'promoted' | 'killed' | null;
    failure_type: string | null;
    created_at: Date;
    dph_total: number | null;
    rented_at: Date | null;
    verdict_at: Date | null;
    destroyed_at: Date | null;
    cost_usd: number | null;
    cost_before_verdict_usd: number | null;
    cost_production_usd: number | null;
    production_sec: number | null;
    bench_rate: number | null;
    cost_counted_at: Date | null;
  }>(
    `SELECT gpu_name, outcome, failure_type, created_at, dph_total, rented_at, verdict_at, destroyed_at,
            cost_usd, cost_before_verdict_usd, cost_production_usd, production_sec, bench_rate, cost_counted_at
     FROM instances WHERE created_at >= $1 ORDER BY created_at`,
    [since],
  );
  const iso = (d: Date | null) => (d === null ? null : d.toISOString());
  return res.rows.map((r) => ({
    gpuName: r.gpu_name,
    outcome: r.outcome,
    failureType: r.failure_type,
    createdAt: r.created_at.toISOString(),
    dph: r.dph_total,
    rentedAt: iso(r.rented_at),
    verdictAt: iso(r.verdict_at),
    destroyedAt: iso(r.destroyed_at),
    costUsd: r.cost_usd,
    beforeVerdictUsd: r.cost_before_verdict_usd,
    productionUsd: r.cost_production_usd,
    productionSec: r.production_sec,
    benchRate: r.bench_rate,
    costCountedAt: iso(r.cost_counted_at),
  }));
}
