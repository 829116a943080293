{#-- legacy_suppliers adopted the table made outside dbt: its stored suppliers 1 and 3
     are kept, 2 is updated by the model's newer row, 4 is added. Fails with every row
     that differs. --#}
with expected as (
  select * from values
    (1, 'Fields Ltd', 'Faro', 100),
    (2, 'Orchard & Co', 'Lisbon', 200),
    (3, 'Hill Farm', 'Braga', 100),
    (4, 'Green Row', 'Porto', 100)
  as t(supplier_id, supplier_name, city, updated_at)
),
stored as (
  select supplier_id, supplier_name, city, updated_at from {{ ref('legacy_suppliers') }}
)
(select 'missing' as problem, * from (select * from expected except select * from stored))
union all
(select 'unexpected' as problem, * from (select * from stored except select * from expected))
