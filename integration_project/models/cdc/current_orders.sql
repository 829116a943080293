{#-- Current state of every order, maintained from the cdc.orders events this model has
     not consumed yet. A delete event removes the order. When one run catches up on
     several publishes, the newest event of an order wins (event_version). With
     changelog: true every committed run also publishes what it changed to the topic
     current.orders.changes (consumed by order_status_changes). --#}
{{ config(
    materialized='mutable_table',
    file_format='auto',
    primary_key=['order_id'],
    version_column='event_version',
    delete_when="op = 'd'",
    changelog=true
) }}

select
  order_id,
  op,
  sku,
  amount_cents,
  status,
  event_offset * 1000000 + event_row_idx as event_version
from {{ topic_events(ref('cdc_orders')) }}
