{#-- Append-only audit of order deletions: a second consumer of cdc.orders with a
     predicate; it keeps its own position in the topic. --#}
{{ config(materialized='incremental', incremental_strategy='append', file_format='parquet') }}

select event_offset, event_row_idx, event_produced_at, order_id, sku
from {{ topic_events(ref('cdc_orders'), where="op = 'd'") }}
