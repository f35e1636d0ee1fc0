import type pg from 'pg';

type Db = Pick<pg.Pool, 'query'>;

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
}

export async function upsertInstance(db: Db, r: InstanceRow): Promise<void> {
  await db.query(
    `INSERT INTO instances (rental_key, workflow_id, offer_id, instance_id, machine_id, host_id, gpu_name, num_gpus,
                            cpu_ram_mb, dph_total, label, stage)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)
     ON CONFLICT (rental_key) DO UPDATE SET
       instance_id = COALESCE(EXCLUDED.instance_id, instances.instance_id),
       machine_id = COALESCE(EXCLUDED.machine_id, instances.machine_id),
       host_id = COALESCE(EXCLUDED.host_id, instances.host_id),
       gpu_name = COALESCE(EXCLUDED.gpu_name, instances.gpu_name),
       num_gpus = COALESCE(EXCLUDED.num_gpus, instances.num_gpus),
       cpu_ram_mb = COALESCE(EXCLUDED.cpu_ram_mb, instances.cpu_ram_mb),
       dph_total = COALESCE(EXCLUDED.dph_total, instances.dph_total),
       label = COALESCE(EXCLUDED.label, instances.label),
       stage = EXCLUDED.stage,
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
  o: { rentalKey: string; outcome: string; failureType: string | null; reason: string; destroyed: boolean },
): Promise<boolean> {
  const res = await db.query(
    `UPDATE instances SET outcome = $2, failure_type = $3, reason = $4, stage = $5,
       destroyed_at = CASE WHEN $6 THEN now() ELSE destroyed_at END, updated_at = now()
     WHERE rental_key = $1 AND (outcome IS NULL OR (outcome = 'promoted' AND $2 = 'killed'))`,
    [o.rentalKey, o.outcome, o.failureType, o.reason, o.outcome === 'promoted' ? 'promoted' : 'killed', o.destroyed],
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

export async function markBad(db: Db, machineId: number, reason: string, source: 'rule' | 'operator'): Promise<void> {
  await db.query(
    `INSERT INTO bad_machines (machine_id, reason, source) VALUES ($1,$2,$3)
     ON CONFLICT (machine_id) DO UPDATE SET reason = EXCLUDED.reason, source = EXCLUDED.source, marked_at = now()`,
    [machineId, reason, source],
  );
}

export async function listBadMachineIds(db: Db): Promise<number[]> {
  const res = await db.query<{ machine_id: string }>('SELECT machine_id FROM bad_machines WHERE NOT ignored');
  return res.rows.map((r) => Number(r.machine_id));
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
}

/** Instances still rented: promoted ones and lifecycles that have not ended. */
export async function rentedRows(db: Db): Promise<FleetRow[]> {
  const res = await db.query<{
    rental_key: string;
    workflow_id: string;
    offer_id: string;
    machine_id: string | null;
    outcome: string | null;
    bench_rate: number | null;
    dph_total: number | null;
  }>(`SELECT rental_key, workflow_id, offer_id, machine_id, outcome, bench_rate, dph_total FROM instances
      WHERE destroyed_at IS NULL AND (outcome IS NULL OR outcome = 'promoted')`);
  return res.rows.map((r) => ({
    rentalKey: r.rental_key,
    workflowId: r.workflow_id,
    offerId: Number(r.offer_id),
    machineId: r.machine_id === null ? null : Number(r.machine_id),
    outcome: r.outcome,
    benchRate: r.bench_rate,
    dphTotal: r.dph_total,
  }));
}

export async function perfByMachine(
  db: Db,
): Promise<Array<{ machineId: number; gpuName: string; numGpus: number; rate: number }>> {
  const res = await db.query<{ machine_id: string; gpu_name: string; num_gpus: number; last_rate: number }>(
    'SELECT machine_id, gpu_name, num_gpus, last_rate FROM host_perf WHERE last_rate IS NOT NULL',
  );
  return res.rows.map((r) => ({
    machineId: Number(r.machine_id),
    gpuName: r.gpu_name,
    numGpus: r.num_gpus,
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
}

/** Every machine ever marked bad, ignored ones included (the CLI's `machines list`); newest first. */
export async function machineRecords(db: Db, machineId?: number): Promise<MachineRecord[]> {
  const res = await db.query<{
    machine_id: string;
    reason: string;
    source: 'rule' | 'operator';
    ignored: boolean;
    marked_at: Date;
  }>(
    `SELECT machine_id, reason, source, ignored, marked_at FROM bad_machines
     WHERE $1::bigint IS NULL OR machine_id = $1 ORDER BY marked_at DESC, machine_id`,
    [machineId ?? null],
  );
  return res.rows.map((r) => ({
    machineId: Number(r.machine_id),
    reason: r.reason,
    source: r.source,
    ignored: r.ignored,
    markedAt: new Date(r.marked_at).toISOString(),
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
