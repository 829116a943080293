{#-- Storage tables of mutable_table models and the mutable_tables registry. --#}

{#-- A session temp view next to a model: <identifier>__jammi_<suffix>. --#}
{% macro mutable_temp_relation(target_relation, suffix) -%}
  {%- set relation = target_relation.incorporate(path={'identifier': target_relation.identifier ~ '__jammi_' ~ suffix}, type='view') -%}
  {{ return(relation.include(database=false, schema=false)) }}
{%- endmacro %}


{% macro get_create_temp_view_sql(relation, select_sql) -%}
  create or replace temporary view {{ relation }} as
  {{ select_sql }}
{%- endmacro %}


{#-- The rewrite applier's materialized change set: <identifier>__jammi_changes_<run id>. --#}
{% macro mutable_staging_relation(target_relation, run_id) -%}
  {{ return(target_relation.incorporate(path={'identifier': target_relation.identifier ~ '__jammi_changes_' ~ run_id}, type='table')) }}
{%- endmacro %}


{#-- Stamped with its owner, so that only a run that is provably gone has its staging
     table removed by another run (adapter.mutable_drop_abandoned_leftovers). --#}
{% macro get_create_staging_table_sql(staging_relation, select_sql) -%}
  create table {{ staging_relation }} using parquet
  tblproperties (
    {%- for key, value in adapter.mutable_holder_properties().items() %}
    {{ adapter.sql_string(key) }} = {{ adapter.sql_string(value) }}{{ ',' if not loop.last }}
    {%- endfor %}
  )
  as
  {{ select_sql }}
{%- endmacro %}


{#-- The model's tblproperties an existing table does not hold yet, set before the run
     writes (mutable_table/tblproperties_config.py). --#}
{% macro get_set_tblproperties_sql(target_relation, properties) -%}
  alter table {{ target_relation }} set tblproperties (
    {%- for key, value in properties.items() %}
    {{ adapter.sql_string(key) }} = {{ adapter.sql_string(value) }}{{ ',' if not loop.last }}
    {%- endfor %}
  )
{%- endmacro %}


{% macro get_add_columns_sql(target_relation, columns) -%}
  alter table {{ target_relation }} add columns (
    {%- for c in columns %}{{ adapter.quote_column(c[0]) }} {{ c[1] }}{{ ', ' if not loop.last }}{% endfor -%}
  )
{%- endmacro %}


{% macro fetch_schema_location(relation) -%}
  {%- set rows = run_query('describe schema extended ' ~ relation.schema) -%}
  {{ return(adapter.mutable_location(rows)) }}
{%- endmacro %}


{#-- What is stored for an existing mutable table: its properties (jammi.*), format,
     columns and (for the rewrite formats) the version directory it points at, all from
     one `describe table extended`. --#}
{#-- `subject`: who names the table in an error (default: the model being run; an
     operation passes its own). `adopt`: what a run does with a table another
     materialization built: {'definition': the batch's, 'tenant': the bound tenant,
     'requested': the model's file_format} to adopt it (adoption.sql), {'rebuild': true}
     when the run rebuilds it; none refuses it. A definition Spark redacted is read from
     the registry. --#}
{% macro fetch_mutable_table_state(relation, subject=none, adopt=none) -%}
  {{ return(adapter.mutable_table_state(relation, subject, adopt, model.name if subject is none else none, config.get('registry_schema'))) }}
{%- endmacro %}


{#-- Drop a mutable table and (rewrite formats) all its version directories. --#}
{% macro drop_mutable_table(relation, state) -%}
  {%- do run_query('drop table if exists ' ~ relation) -%}
  {#-- Delta's tombstones (rules/tombstone_phases.py; parquet/orc keep theirs in the version directories) --#}
  {%- do run_query('drop table if exists ' ~ mutable_tombstone_relation(relation)) -%}
  {%- if state.location -%}
    {%- do adapter.mutable_remove_paths(relation, [adapter.mutable_base_location(state.location)], adapter.mutable_run_id()) -%}
  {%- endif -%}
{%- endmacro %}
