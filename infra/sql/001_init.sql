-- One row per lifecycle workflow (a rented instance, or an attempt to rent one).
CREATE TABLE instances (
  workflow_id     text PRIMARY KEY,
  offer_id        bigint NOT NULL,
  instance_id     bigint,
  machine_id      bigint,
  host_id         bigint,
  gpu_name        text,
  num_gpus        integer,
  cpu_ram_mb      bigint,
  dph_total       double precision,
  label           text,
  stage           text NOT NULL,
  outcome         text CHECK (outcome IN ('promoted', 'killed')),
  failure_type    text,
  reason          text,
  bench_rate      double precision,
  destroyed_at    timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX instances_machine_idx ON instances (machine_id);

-- Stage changes and other notable moments, in order; (workflow_id, seq) makes retried writes idempotent.
CREATE TABLE lifecycle_events (
  workflow_id  text NOT NULL,
  seq          integer NOT NULL,
  stage        text NOT NULL,
  message      text NOT NULL,
  details      jsonb,
  at           timestamptz NOT NULL,
  PRIMARY KEY (workflow_id, seq)
);

CREATE TABLE benchmark_results (
  workflow_id   text PRIMARY KEY,
  machine_id    bigint NOT NULL,
  gpu_name      text NOT NULL,
  num_gpus      integer NOT NULL,
  requested     integer NOT NULL,
  completed     integer NOT NULL,
  concurrency   integer NOT NULL,
  elapsed_ms    bigint NOT NULL,
  rate          double precision NOT NULL,
  timings       jsonb NOT NULL,
  stopped_early boolean NOT NULL,
  recorded_at   timestamptz NOT NULL DEFAULT now()
);

-- What benchmarks taught about each physical machine (machine_id, never host_id: a host owns many machines).
CREATE TABLE host_perf (
  machine_id     bigint PRIMARY KEY,
  gpu_name       text NOT NULL,
  num_gpus       integer NOT NULL,
  benchmarks     integer NOT NULL DEFAULT 0,
  best_rate      double precision,
  last_rate      double precision,
  last_dph       double precision,
  updated_at     timestamptz NOT NULL DEFAULT now()
);

-- Failures per machine by type; the bad-machine rule reads these counts.
CREATE TABLE machine_failures (
  machine_id    bigint NOT NULL,
  failure_type  text NOT NULL,
  count         integer NOT NULL DEFAULT 0,
  last_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (machine_id, failure_type)
);

CREATE TABLE bad_machines (
  machine_id   bigint PRIMARY KEY,
  reason       text NOT NULL,
  source       text NOT NULL CHECK (source IN ('rule', 'operator')),
  ignored      boolean NOT NULL DEFAULT false,
  marked_at    timestamptz NOT NULL DEFAULT now()
);

-- Log tails shipped from hosts (daemon log, benchmark output), kept after the instance is destroyed.
-- The newest tail per source replaces the older one, so retried shipments stay idempotent.
CREATE TABLE log_tails (
  workflow_id  text NOT NULL,
  source       text NOT NULL,
  text         text NOT NULL,
  at           timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workflow_id, source)
);
