{#-- dbt-spark's table / incremental / snapshot materializations build a table with
     create_table_as. For delta and iceberg dbt-spark always writes `create or replace
     table ... as select` (a replace-as-select), even for a first run. Since Spark 3.5.6
     (SPARK-51936) a replace-as-select overwrites the staged table, which Delta Lake
     before 3.3.2 does not declare (delta-io/delta#4671: "Table ... does not support
     truncate in batch mode"). So:

     - the table does not exist yet: `create table ... as select` (atomic on its own; a
       concurrent creator makes it fail rather than be overwritten);
     - an existing delta table on a Spark that cannot replace-as-select into Delta
       (adapter.delta_replace_plan probes it, and plans the rebuild): get_delta_rebuild_sql
       (engine/delta_replace.py says how and what it guarantees);
     - everything else: dbt-spark's macro. --#}
{% macro jammi__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- set file_format = config.get('file_format', validator=validation.any[basestring]) -%}
  {%- if language != 'sql' or temporary or file_format not in ['delta', 'iceberg'] or not execute -%}
    {{ spark__create_table_as(temporary, relation, compiled_code, language) }}
  {%- elif load_cached_relation(relation) is none -%}
    {{ get_create_table_as_select_sql(relation, compiled_code) }}
  {%- else -%}
    {%- set contract_columns = model['columns'].values() | map(attribute='name') | list if config.get('contract').enforced else none -%}
    {%- set rebuild = adapter.delta_replace_plan(relation, compiled_code, config.get('partition_by'), contract_columns) if file_format == 'delta' else none -%}
    {%- if rebuild is not none and rebuild.mode != 'replace_as_select' -%}
      {{ get_delta_rebuild_sql(relation, compiled_code, rebuild) }}
    {%- else -%}
      {{ spark__create_table_as(temporary, relation, compiled_code, language) }}
    {%- endif -%}
  {%- endif -%}
{%- endmacro %}


{#-- `create table ... as select`: dbt-spark's statement without `or replace`. --#}
{% macro get_create_table_as_select_sql(relation, compiled_code) -%}
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
{%- endmacro %}


{#-- Rebuild an existing delta table without a replace-as-select, as `rebuild`
     (adapter.delta_replace_plan) says. Same columns (names, types, order) and
     partitioning: `insert overwrite`, one atomic Delta commit (the model's tblproperties
     are set first). Otherwise `replace table <t> (<columns>)` runs here and the
     returned statement is `insert into`: two Delta commits, the previous rows stay in
     the table's history. An enforced contract is checked before anything is written. --#}
{% macro get_delta_rebuild_sql(relation, compiled_code, rebuild) -%}
  {%- set contract_config = config.get('contract') -%}
  {%- if contract_config.enforced -%}
    {%- do get_assert_columns_equivalent(compiled_code) -%}
    {%- set compiled_code = get_select_subquery(compiled_code) -%}
  {%- endif -%}
  {%- if rebuild.mode == 'overwrite' -%}
    {%- if config.get('tblproperties') is not none -%}
      {%- do run_query('alter table ' ~ relation ~ ' set ' ~ tblproperties_clause()) -%}
    {%- endif %}
    insert overwrite table {{ relation }}
    {{ compiled_code }}
  {%- else -%}
    {%- do run_query(get_replace_delta_table_sql(relation, rebuild.column_list)) %}
    insert into {{ relation }}
    {{ compiled_code }}
  {%- endif -%}
{%- endmacro %}


{#-- `replace table` with the new columns and the model's table clauses, no query. --#}
{% macro get_replace_delta_table_sql(relation, column_list) -%}
  replace table {{ relation }} {{ column_list }}
  {{ file_format_clause() }}
  {{ options_clause() }}
  {{ tblproperties_clause() }}
  {{ partition_cols(label="partitioned by") }}
  {{ location_clause() }}
  {{ comment_clause() }}
{%- endmacro %}
