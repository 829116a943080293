{#-- The feature team's item feed: each row says what an item looked like from
     `changed_at` on. `batch` is when the row arrives; batch 3 carries a late correction
     (a change that happened before rows already loaded). --#}
{{ config(materialized='view') }}

select * from values
  -- batch 1: initial load
  (1, 501, 'standard', 'in_stock', timestamp'2024-03-01 00:00:00'),
  (1, 502, 'premium', 'in_stock', timestamp'2024-03-01 00:00:00'),
  (1, 503, 'budget', 'in_stock', timestamp'2024-03-01 00:00:00'),
  -- batch 2: 501 moves up a tier, 502 is re-sent unchanged (no new interval),
  --          503 sells out then comes back, 504 is new
  (2, 501, 'premium', 'in_stock', timestamp'2024-03-10 00:00:00'),
  (2, 502, 'premium', 'in_stock', timestamp'2024-03-10 00:00:00'),
  (2, 503, 'budget', 'sold_out', timestamp'2024-03-05 00:00:00'),
  (2, 503, 'budget', 'in_stock', timestamp'2024-03-12 00:00:00'),
  (2, 504, 'standard', 'preorder', timestamp'2024-03-11 00:00:00'),
  -- batch 3: 502 is delisted (closes its history); a late correction says 501 was on
  --          backorder from 03-05 to its tier change on 03-10 (splits a closed interval)
  (3, 502, 'premium', 'delisted', timestamp'2024-03-15 00:00:00'),
  (3, 501, 'standard', 'backorder', timestamp'2024-03-05 00:00:00')
as t(batch, item_id, price_tier, availability, changed_at)
