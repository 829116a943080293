{#-- Every stored product holds its newest change of the batches built so far (the
     version rule: a late, older change loses), and no deleted product remains. Rows
     returned are products that break it. In a tenant-bound build this reads the
     bound tenant's products, which hold the same newest changes. --#}
with newest as (
  select product_id, price, updated_at, is_deleted,
         row_number() over (partition by product_id order by updated_at desc) as rank
  from {{ ref('product_changes') }}
  where batch <= {{ var('product_batch', 3) }}
)

select p.product_id, p.price, p.updated_at
from {{ ref('products') }} as p
left join newest as n on n.product_id = p.product_id and n.rank = 1
where n.product_id is null
   or n.is_deleted
   or p.price <> n.price
   or p.updated_at <> n.updated_at
