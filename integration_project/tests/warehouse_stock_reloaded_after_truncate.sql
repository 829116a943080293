{#-- warehouse_stock: only the reload after the truncate is stored (sku 'b' at lsn 4);
     'a' ended with the truncate and 'c' with its delete. Fails with every row that
     differs. --#}
with expected as (
  select * from values ('b', 4, 4L, 'r') as t(sku, on_hand, lsn, op)
),
stored as (
  select sku, on_hand, lsn, op from {{ ref('warehouse_stock') }}
)
(select 'missing' as problem, * from (select * from expected except select * from stored))
union all
(select 'unexpected' as problem, * from (select * from stored except select * from expected))
