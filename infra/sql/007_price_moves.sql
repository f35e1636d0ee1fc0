-- A watched rental's price can move: Vast reprices it, or the lifecycle raises an interruptible bid. The
-- lifecycle then records the new dph_total with its cost counted up to that moment: cost_before_verdict_usd
-- and cost_production_usd hold the GPU-$ up to cost_counted_at, dph_total what Vast bills from then on.
ALTER TABLE instances ADD COLUMN cost_counted_at timestamptz;
