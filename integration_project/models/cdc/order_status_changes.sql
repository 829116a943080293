{#-- Audit of order status transitions, from the changelog of current_orders (the topic
     current.orders.changes): each run appends only the changelog events it has not
     consumed yet, with the status before and after and the table version. --#}
{{ config(materialized='incremental', incremental_strategy='append', file_format='parquet') }}

select
  event_offset,
  event_row_idx,
  table_version,
  change_kind,
  order_id,
  previous_status,
  status
from {{ topic_events(ref('current_orders'), where="change_kind <> 'update' or not (status <=> previous_status)") }}
