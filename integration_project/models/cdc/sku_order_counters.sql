{#-- A feature-store counter per sku, kept from the cdc.orders events this model has not
     consumed yet (docs/merge_functions.md, docs/ttl.md): every event adds 1 to
     order_events and its amount to amount_cents_total, first/last event times widen,
     first_status keeps the first status ever seen and last_status the newest non-NULL
     one. The event's position is the version, so a batch applied twice adds nothing.
     A sku without events for 30 days is forgotten (ttl on last_event_ms). --#}
{{ config(
    materialized='mutable_table',
    primary_key=['sku'],
    version_column='event_version',
    merge_functions={
      'order_events': 'sum',
      'amount_cents_total': 'sum',
      'first_event_ms': 'min',
      'last_event_ms': 'max',
      'first_status': 'first',
      'last_status': 'last_non_null'
    },
    ttl_ms=2592000000,
    ttl_column='last_event_ms'
) }}

select
  sku,
  1 as order_events,
  coalesce(amount_cents, 0) as amount_cents_total,
  event_produced_at div 1000 as first_event_ms,
  event_produced_at div 1000 as last_event_ms,
  status as first_status,
  status as last_status,
  event_offset * 1000000 + event_row_idx as event_version
from {{ topic_events(ref('cdc_orders')) }}
