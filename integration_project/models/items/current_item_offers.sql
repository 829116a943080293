{#-- What is on offer now: only the open rows (valid_to is null) of the item dimension,
     joined with the catalog. A delisted item has no open row, so it drops out. --#}
{{ config(materialized='table', file_format=demo_table_format()) }}

select
  c.item_id,
  c.item_name,
  c.department,
  d.price_tier,
  d.availability,
  d.valid_from as current_since_ms
from {{ ref('item_dimensions') }} as d
join {{ ref('item_catalog') }} as c on c.item_id = d.item_id
where d.valid_to is null
