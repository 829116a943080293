{#-- Replay: the first two publishes of cdc.orders, straight from the backing table. --#}
{{ config(materialized='view') }}

select _offset as event_offset, _row_idx as event_row_idx, order_id, op
from {{ topic_range(ref('cdc_orders'), 1, 2) }}
