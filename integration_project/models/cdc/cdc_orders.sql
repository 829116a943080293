{#-- The order service's change stream, published to topic `cdc.orders`.
     Each run publishes one batch of changes; --vars '{cdc_batch: N}' picks which
     (in production this would select the changes captured since the last run). --#}
{{ config(materialized='topic', topic_name='cdc.orders', retention_offsets=100) }}

with changes as (
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
)

select order_id, op, sku, amount_cents, status
from changes
where batch = {{ var('cdc_batch', 1) }}
