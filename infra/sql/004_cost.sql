-- What each rental cost, in real units at the price Vast bills (workflows/domain/policy/cost.ts). rented_at is the
-- time of the rent, from which a report counts an open rental on to now. The cost columns are written by the
-- lifecycle in real units with the verdict (promoted: its cost until then) and again when the rental ends;
-- rented_sec and production_sec are real seconds (rented, and since promotion).
ALTER TABLE instances ADD COLUMN rented_at timestamptz;
ALTER TABLE instances ADD COLUMN verdict_at timestamptz;
ALTER TABLE instances ADD COLUMN cost_usd double precision;
ALTER TABLE instances ADD COLUMN cost_before_verdict_usd double precision;
ALTER TABLE instances ADD COLUMN cost_production_usd double precision;
ALTER TABLE instances ADD COLUMN rented_sec double precision;
ALTER TABLE instances ADD COLUMN production_sec double precision;
CREATE INDEX instances_created_idx ON instances (created_at);
