-- When the store received each lifecycle event. `at` is the workflow's own clock (the start of the
-- workflow task that decided it); recorded_at shows how long the decision took to land, which is what
-- the benchmark's decision latency measures.
ALTER TABLE lifecycle_events ADD COLUMN recorded_at timestamptz NOT NULL DEFAULT clock_timestamp();
