{#-- The integration project's formats per target. On `--target iceberg` (make
     demo-iceberg) a table model is an Iceberg table: under Iceberg's SparkSessionCatalog
     a dropped parquet table keeps its files, so re-creating it fails (README, "Table
     formats"). Mutable tables there use `auto` (Iceberg), except those with an option
     Iceberg refuses (changelog, deletes that stay deleted), which stay parquet. --#}
{% macro demo_table_format() -%}
  {{ return('iceberg' if target.name == 'iceberg' else 'parquet') }}
{%- endmacro %}

{% macro demo_format_beside_iceberg() -%}
  {{ return('parquet' if target.name == 'iceberg' else 'auto') }}
{%- endmacro %}
