{#-- Slowly-changing item dimensions (SCD Type 2, docs/scd2.md): one row per item and
     interval [valid_from, valid_to); valid_to NULL is the current row.

     Batches are driven by the var `item_batch` (default 3, the latest): the first build
     applies every batch up to it at once (several changes per item are applied in
     effective-time order), later runs (is_incremental()) apply just that batch:
       dbt run -s item_dimensions --vars '{item_batch: 2}'
     This model keeps Jammi's closed type set (type_set: jammi), as a table that Jammi's
     own engine must read: the effective time is encoded as epoch millis (without
     type_set: jammi it would be the timestamp itself, and valid_from / valid_to
     timestamps, docs/scd2.md). The index on
     (item_id, valid_to) lays the table out for "current row of an item" lookups. --#}
{{ config(
    materialized='mutable_table',
    type_set='jammi',
    primary_key=['item_id'],
    history='scd2',
    track_columns=['price_tier', 'availability'],
    delete_when="availability = 'delisted'",
    indexes=[{'name': 'by_item_current', 'columns': ['item_id', 'valid_to']}]
) }}

select
  item_id,
  price_tier,
  availability,
  {{ to_epoch_millis('changed_at') }} as valid_from
from {{ ref('item_changes') }}
{% if is_incremental() %}
where batch = {{ var('item_batch', 3) }}
{% else %}
where batch <= {{ var('item_batch', 3) }}
{% endif %}
