-- An interruptible rental's bid ($/h, Vast's `price`) at rent; NULL for on-demand. The scaler splits its
-- fleet into an on-demand floor and interruptible capacity above it by this column.
ALTER TABLE instances ADD COLUMN bid_dph double precision;
