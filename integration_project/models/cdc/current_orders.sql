{#-- Current state of every order, maintained from the cdc.orders events this model has
     not consumed yet. A delete event removes the order. When one run catches up on
     several publishes, the newest event of an order wins: its position in the topic
     (event_offset, then event_row_idx). op and the position are rule_columns: read by
     the rules, not stored as values (the position is kept as the table's
     _jammi_version_* columns). With changelog: true every committed run also
     publishes what it changed to the topic current.orders.changes (consumed by
     order_status_changes). --#}
{{ config(
    materialized='mutable_table',
    file_format='auto',
    primary_key=['order_id'],
    version_column=['event_offset', 'event_row_idx'],
    delete_when="op = 'd'",
    rule_columns=['op', 'event_offset', 'event_row_idx'],
    changelog=true
) }}

select
  order_id,
  op,
  sku,
  amount_cents,
  status,
  event_offset,
  event_row_idx
from {{ topic_events(ref('cdc_orders')) }}
