{#-- Adoption (docs/mutable_table.md#existing-relations): this table is first made outside
     dbt (the on-run-start hook create_legacy_suppliers, as a project with years of rows
     in a `table` or `incremental` model would have it); the first build adopts it and
     keeps its rows, and every build applies the model's batch to them. --#}
{{ config(materialized='mutable_table', primary_key=['supplier_id'],
          version_column='updated_at', file_format='auto') }}

select * from values
  (2, 'Orchard & Co', 'Lisbon', 200),
  (4, 'Green Row', 'Porto', 100)
as t(supplier_id, supplier_name, city, updated_at)
