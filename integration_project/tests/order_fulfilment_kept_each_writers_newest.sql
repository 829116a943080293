{#-- order_fulfilment: each group holds its writer's newest change (order 1: 'paid' at
     order_version 2, 'dhl' at shipping_version 3), the columns in no group the newest
     changed_at, and order 2 was deleted. Fails with every row that differs. --#}
with expected as (
  select * from values (1, 'paid', 2, 'dhl', 3, 13L)
  as t(order_id, status, order_version, carrier, shipping_version, changed_at)
),
stored as (
  select order_id, status, order_version, carrier, shipping_version, changed_at
  from {{ ref('order_fulfilment') }}
)
(select 'missing' as problem, * from (select * from expected except select * from stored))
union all
(select 'unexpected' as problem, * from (select * from stored except select * from expected))
