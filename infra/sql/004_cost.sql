-- What each rental cost, in real units at the price Vast bills (workflows/domain/policy/cost.ts). rented_at is the
-- workflow's clock at the rent; time_scale how fast that clock ran (1 in production, the simulators' factor in
-- the demo), so a report can count an open rental on to now. The cost columns are written with the verdict
-- (promoted: its cost until then) and again when the rental ends; production_sec is real seconds since promotion.
ALTER TABLE instances ADD COLUMN rented_at timestamptz;
ALTER TABLE instances ADD COLUMN time_scale double precision NOT NULL DEFAULT 1;
ALTER TABLE instances ADD COLUMN verdict_at timestamptz;
ALTER TABLE instances ADD COLUMN cost_usd double precision;
ALTER TABLE instances ADD COLUMN cost_before_verdict_usd double precision;
ALTER TABLE instances ADD COLUMN cost_production_usd double precision;
ALTER TABLE instances ADD COLUMN rented_sec double precision;
ALTER TABLE instances ADD COLUMN production_sec double precision;
CREATE INDEX instances_created_idx ON instances (created_at);
