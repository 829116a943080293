{#-- The order service's captured changes (in production: a source over the CDC
     landing table). One row per change; `batch` is the capture run it arrived in. --#}
{{ config(materialized='view') }}

select * from values
  (1, 1001, 'c', 'acme-anvils',  2500, 'open'),
  (1, 1002, 'c', 'rocket-skates', 9900, 'open'),
  (1, 1003, 'c', 'giant-magnet', 4200, 'open'),
  (2, 1002, 'u', 'rocket-skates', 8900, 'paid'),
  (2, 1001, 'd', 'acme-anvils', cast(null as int), cast(null as string)),
  (2, 1004, 'c', 'bird-seed',     300, 'open'),
  (3, 1004, 'u', 'bird-seed',     300, 'paid'),
  (3, 1003, 'd', 'giant-magnet', cast(null as int), cast(null as string)),
  (3, 1005, 'c', 'tornado-kit',  7700, 'open')
  as t(batch, order_id, op, sku, amount_cents, status)
