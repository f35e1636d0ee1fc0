-- One identity per rental (README, "One identity per rental"). A lifecycle's workflow id names the
-- offer, so an offer rented again reuses it; every record is keyed by the rental instead, with the
-- offer and the workflow id kept as columns. Rows from before were one lifecycle per workflow id, so
-- their rental key is their workflow id (which is also what those lifecycles' labels derive from).
ALTER TABLE instances ADD COLUMN rental_key text;
UPDATE instances SET rental_key = workflow_id;
ALTER TABLE instances ALTER COLUMN rental_key SET NOT NULL;
ALTER TABLE instances DROP CONSTRAINT instances_pkey;
ALTER TABLE instances ADD PRIMARY KEY (rental_key);
CREATE INDEX instances_workflow_idx ON instances (workflow_id);
CREATE INDEX instances_offer_idx ON instances (offer_id);
CREATE INDEX instances_label_idx ON instances (label);

ALTER TABLE lifecycle_events ADD COLUMN rental_key text;
UPDATE lifecycle_events SET rental_key = workflow_id;
ALTER TABLE lifecycle_events ALTER COLUMN rental_key SET NOT NULL;
ALTER TABLE lifecycle_events DROP CONSTRAINT lifecycle_events_pkey;
ALTER TABLE lifecycle_events ADD PRIMARY KEY (rental_key, seq);
CREATE INDEX lifecycle_events_workflow_idx ON lifecycle_events (workflow_id);

ALTER TABLE benchmark_results ADD COLUMN rental_key text;
UPDATE benchmark_results SET rental_key = workflow_id;
ALTER TABLE benchmark_results ALTER COLUMN rental_key SET NOT NULL;
ALTER TABLE benchmark_results DROP CONSTRAINT benchmark_results_pkey;
ALTER TABLE benchmark_results ADD PRIMARY KEY (rental_key);
CREATE INDEX benchmark_results_workflow_idx ON benchmark_results (workflow_id);

ALTER TABLE log_tails ADD COLUMN rental_key text;
UPDATE log_tails SET rental_key = workflow_id;
ALTER TABLE log_tails ALTER COLUMN rental_key SET NOT NULL;
ALTER TABLE log_tails DROP CONSTRAINT log_tails_pkey;
ALTER TABLE log_tails ADD PRIMARY KEY (rental_key, source);
CREATE INDEX log_tails_workflow_idx ON log_tails (workflow_id);
