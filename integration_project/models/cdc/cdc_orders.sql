{#-- The order service's change stream, published to topic `cdc.orders`.
     Each run publishes one batch of changes; --vars '{cdc_batch: N}' picks which
     (in production this would select the changes captured since the last run). --#}
{{ config(materialized='topic', topic_name='cdc.orders', retention_offsets=100,
          retention_ms=2592000000) }}

select order_id, op, sku, amount_cents, status
from {{ ref('order_service_changes') }}
where batch = {{ var('cdc_batch', 1) }}
