{#-- Stock levels per product, fed by a warehouse feed that only sends what it counted:
     with partial_updates a NULL column keeps the stored value. ordering_column lays the
     table out by the count time; on_schema_change lets a later feed add columns.
       dbt run -s product_stock --vars '{stock_batch: 2}'   (batch 1 is the first load)
     Batch 9 is a broken count that zeroes every shelf: docs/versions.md undoes it with
     mutable_table_history, mutable_table_as_of() and rollback_mutable_table. --#}
{{ config(
    materialized='mutable_table',
    primary_key=['product_id'],
    partial_updates=true,
    ordering_column='counted_ms',
    on_schema_change='append_new_columns'
) }}

select product_id, on_hand, reserved, counted_ms
from values
  (1, 1, 40, 2, 1700000000000),
  (1, 2, 15, 0, 1700000000000),
  (1, 4, 7, 1, 1700000000000),
  (2, 1, 38, cast(null as int), 1700003600000),
  (2, 4, cast(null as int), 3, 1700003600000),
  (9, 1, 0, 0, 1700007200000),
  (9, 2, 0, 0, 1700007200000),
  (9, 4, 0, 0, 1700007200000)
  as t(batch, product_id, on_hand, reserved, counted_ms)
{% if is_incremental() %}
where batch = {{ var('stock_batch', 2) }}
{% else %}
where batch <= 1
{% endif %}
