{#-- dbt-spark's table / incremental / snapshot materializations build a table with
     create_table_as. For delta and iceberg dbt-spark always writes `create or replace
     table ... as select`, even when the table does not exist yet (a first run). A
     replace-as-select is Spark's ReplaceTableAsSelect: since Spark 3.5.6 (SPARK-51936) it
     writes into the staged table with an overwrite, which Delta Lake before 3.3.2 does
     not declare on its staged table (delta-io/delta#4671: "Table ... does not support
     truncate in batch mode"). A plain create-as-select appends into the new table and
     works everywhere.

     So: `create table ... as select` when the relation does not exist (atomic on its
     own: the table appears with its rows, and a concurrent creator makes this fail
     rather than be overwritten); `create or replace table` only where something is
     replaced -- an existing delta/iceberg table on --full-refresh or a re-run of a
     `table` model, exactly as dbt-spark. Everything else is dbt-spark's macro. --#}
{% macro jammi__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- set replaces_in_place = config.get('file_format', validator=validation.any[basestring]) in ['delta', 'iceberg'] -%}
  {%- if language == 'sql' and not temporary and replaces_in_place and load_cached_relation(relation) is none -%}
    create table {{ relation }}
    {%- set contract_config = config.get('contract') -%}
    {%- if contract_config.enforced -%}
      {{ get_assert_columns_equivalent(compiled_code) }}
      {%- set compiled_code = get_select_subquery(compiled_code) %}
    {% endif %}
    {{ file_format_clause() }}
    {{ options_clause() }}
    {{ tblproperties_clause() }}
    {{ partition_cols(label="partitioned by") }}
    {{ clustered_cols(label="clustered by") }}
    {{ location_clause() }}
    {{ comment_clause() }}

    as
    {{ compiled_code }}
  {%- else -%}
    {{ spark__create_table_as(temporary, relation, compiled_code, language) }}
  {%- endif -%}
{%- endmacro %}
