{#-- order_history (hard_deletes: invalidate): the open row of each order is the order as
     current_orders holds it, and a deleted order has no open row. --#}
{{ config(enabled=target.name in ['delta', 'iceberg']) }}
with open_rows as (
  select order_id, sku, amount_cents, status
  from {{ ref('order_history') }}
  where dbt_valid_to is null
)
select coalesce(o.order_id, c.order_id) as order_id
from open_rows o
full outer join {{ ref('current_orders') }} c on o.order_id = c.order_id
where o.order_id is null
   or c.order_id is null
   or not (o.sku <=> c.sku and o.amount_cents <=> c.amount_cents and o.status <=> c.status)
