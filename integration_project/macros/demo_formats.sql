{#-- The integration project's formats per target. On `--target iceberg` (make
     demo-iceberg) a table model is an Iceberg table: under Iceberg's SparkSessionCatalog
     a dropped parquet table keeps its files, so re-creating it fails (README, "Table
     formats"). Mutable tables use `auto`: Iceberg there, with their changelog and
     deletes that stay deleted. --#}
{% macro demo_table_format() -%}
  {{ return('iceberg' if target.name == 'iceberg' else 'parquet') }}
{%- endmacro %}
