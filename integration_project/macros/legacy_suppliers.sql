{#-- A table made outside dbt, before the project adopted it as the mutable_table model
     legacy_suppliers: only made when it does not exist yet, so later builds find the
     mutable table. --#}
{% macro create_legacy_suppliers() -%}
  {%- if not execute -%}{{ return('') }}{%- endif -%}
  {%- set relation = api.Relation.create(schema=target.schema, identifier='legacy_suppliers', type='table') -%}
  {%- if load_relation(relation) is none -%}
    {%- do run_query('create table ' ~ relation ~ ' using ' ~ demo_table_format() ~ ' as select * from values'
        ~ " (1, 'Fields Ltd', 'Faro', 100), (2, 'Orchard Co', 'Lisbon', 100), (3, 'Hill Farm', 'Braga', 100)"
        ~ ' as t(supplier_id, supplier_name, city, updated_at)') -%}
    {#-- dbt listed the schema's relations before this hook: tell its cache --#}
    {%- do adapter.cache_added(relation) -%}
  {%- endif -%}
{%- endmacro %}
