{#-- The changelog of current_orders replays to the table: the newest event of each order
     (by table version) is its stored row, unless it is a delete. Fails with the orders
     that differ. Holds while the changelog has every version since the table was
     created (it has no retention, and current_orders has had changelog: true since).
     The version columns are the table's _jammi_version_* and the changelog's source_*
     (docs/mutable_table.md#rule-columns). --#}
with latest as (
  select *,
         row_number() over (partition by order_id order by table_version desc) as newest
  from {{ topic_backing_table(ref('current_orders')) }}
),

replayed as (
  select order_id, sku, amount_cents, status,
         source_event_offset as event_offset, source_event_row_idx as event_row_idx
  from latest
  where newest = 1 and change_kind <> 'delete'
),

stored as (
  select order_id, sku, amount_cents, status,
         _jammi_version_event_offset as event_offset, _jammi_version_event_row_idx as event_row_idx
  from {{ ref('current_orders') }}
)

select 'not in the table' as problem, order_id
from (select * from replayed except select * from stored)
union all
select 'not in the changelog' as problem, order_id
from (select * from stored except select * from replayed)
