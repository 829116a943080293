{#-- Version groups (docs/mutable_table.md#version-groups): an order service and a
     shipping service write one row per order, each its own columns at its own version,
     in one feed and in no particular order. Order 1's status is 'paid' (order_version 2)
     and its carrier 'dhl' (shipping_version 3) although the rows that set them are not
     the newest by changed_at; the stale 'ups' (shipping_version 1) is ignored. Order 2
     was placed, then deleted (changed_at 40): its shipping row from before the delete
     stays out. Re-sent, the batch changes nothing. --#}
{{ config(
    materialized='mutable_table',
    primary_key=['order_id'],
    version_column='changed_at',
    delete_when="op = 'd'",
    rule_columns=['op'],
    version_groups={'order_version': ['status'], 'shipping_version': ['carrier']}
) }}

select * from values
  (1, 'placed', 1, cast(null as string), cast(null as int), 10L, 'u'),
  (1, cast(null as string), cast(null as int), 'dhl', 3, 12L, 'u'),
  (1, 'paid', 2, cast(null as string), cast(null as int), 11L, 'u'),
  (1, cast(null as string), cast(null as int), 'ups', 1, 13L, 'u'),
  (2, 'placed', 1, cast(null as string), cast(null as int), 20L, 'u'),
  (2, cast(null as string), cast(null as int), 'ups', 1, 30L, 'u'),
  (2, cast(null as string), cast(null as int), cast(null as string), cast(null as int), 40L, 'd')
as t(order_id, status, order_version, carrier, shipping_version, changed_at, op)
