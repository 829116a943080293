{#-- Every captured change, published to topic `order.audit` for auditors. An audit feed
     only needs each event's place, not a dense count, so it takes row_idx: ordered:
     _row_idx is unique and increasing in the output order, with gaps between Spark's
     tasks, and nothing is gathered before the write (docs/topic.md). --#}
{{ config(materialized='topic', topic_name='order.audit', row_idx='ordered') }}

select order_id, op, sku, batch
from {{ ref('order_service_changes') }}
where batch = {{ var('cdc_batch', 1) }}
