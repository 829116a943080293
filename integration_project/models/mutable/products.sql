{#-- Products with their current price, edited row by row by product_id.

     Batches are driven by the var `product_batch` (default 3, the latest): the first
     build applies every change up to it at once -- the version rule picks the newest
     change per product -- and later runs (is_incremental()) apply just that batch:
       dbt run -s products --vars '{product_batch: 2}'
     Spark's own types are stored as they are (type_set: spark, the default): the price
     stays a decimal and the change's timestamp is the version.
     The last 5 committed versions stay readable (docs/versions.md):
       dbt run-operation mutable_table_history --args '{model: products}'
       dbt show --inline "select * from {{ mutable_table_as_of(ref('products'), version=1) }} as p"
       dbt run-operation rollback_mutable_table --args '{model: products, to_version: 1}' --#}
{{ config(
    materialized='mutable_table',
    file_format='auto',
    primary_key=['product_id'],
    version_column='updated_at',
    delete_when='is_deleted',
    indexes=[{'name': 'by_sku', 'columns': ['sku'], 'unique': true},
             {'name': 'by_category', 'columns': ['category']}],
    versions_kept=5
) }}

select
  product_id,
  sku,
  name,
  category,
  price,
  is_deleted,
  updated_at
from {{ ref('product_changes') }}
{% if is_incremental() %}
where batch = {{ var('product_batch', 3) }}
{% else %}
where batch <= {{ var('product_batch', 3) }}
{% endif %}
