{#-- Storage tables of mutable_table models and the mutable_tables registry. --#}

{#-- A session temp view next to a model: <identifier>__jammi_<suffix>. --#}
{% macro mutable_temp_relation(target_relation, suffix) -%}
  {%- set relation = target_relation.incorporate(path={'identifier': target_relation.identifier ~ '__jammi_' ~ suffix}, type='view') -%}
  {{ return(relation.include(database=false, schema=false)) }}
{%- endmacro %}


{#-- The rewrite applier's materialized change set: <identifier>__jammi_changes_<run id>. --#}
{% macro mutable_staging_relation(target_relation, run_id) -%}
  {{ return(target_relation.incorporate(path={'identifier': target_relation.identifier ~ '__jammi_changes_' ~ run_id}, type='table')) }}
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


{#-- What is stored for an existing mutable table: its properties (jammi.*), format,
     columns and (for the rewrite formats) the version directory it points at, all from
     one `describe table extended`. --#}
{#-- `subject`: who names the table in an error (default: the model being run; an
     operation passes its own). `adopt`: what a run does with a table another
     materialization built: {'definition': the batch's, 'tenant': the bound tenant,
     'requested': the model's file_format} to adopt it (adapter.mutable_adopt), {'rebuild': true}
     when the run rebuilds it; none refuses it. A definition Spark redacted is read from
     the registry. --#}
{% macro fetch_mutable_table_state(relation, subject=none, adopt=none) -%}
  {{ return(adapter.mutable_table_state(relation, subject, adopt, model.name if subject is none else none, config.get('registry_schema'))) }}
{%- endmacro %}
