{#-- The `topics` registry, the backing table and the view named after the model. --#}

{% macro topic_registry_relation(schema_relation) -%}
  {{ return(api.Relation.create(database=schema_relation.database, schema=schema_relation.schema,
                                identifier='topics', type='table')) }}
{%- endmacro %}


{% macro get_create_topic_registry_sql(registry) -%}
  create table if not exists {{ registry }} (
    topic_id string,
    name string,
    backing_table string,
    relation_name string,
    schema_json string,
    file_format string,
    retention_offsets bigint,
    retention_ms bigint,
    created_at bigint
  ) using parquet
  comment 'dbt-jammi topics registry: one row per topic; created_at is UTC microseconds'
{%- endmacro %}


{#-- The registry row of the topic a relation (the model's view) stands for, or none. --#}
{% macro fetch_topic_registration(relation) -%}
  {%- set registry = topic_registry_relation(relation) -%}
  {%- if not topic_table_exists(registry) -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set rows = run_query(
      "select topic_id, name, backing_table, schema_json, file_format, relation_name "
      ~ "from " ~ registry ~ " where relation_name = " ~ adapter.sql_string(relation.identifier)
      ~ " order by created_at limit 1") -%}
  {%- if rows | length == 0 -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set row = rows[0] -%}
  {{ return({
      'topic_id': row[0], 'name': row[1], 'backing_table': row[2],
      'columns': fromjson(row[3]), 'file_format': row[4], 'relation_name': row[5]}) }}
{%- endmacro %}


{% macro fetch_topic_name_owner(registry, name) -%}
  {%- set rows = run_query("select relation_name from " ~ registry ~ " where name = "
                           ~ adapter.sql_string(name) ~ " limit 1") -%}
  {{ return(rows[0][0] if rows | length > 0 else none) }}
{%- endmacro %}


{% macro topic_backing_relation(relation, topic) -%}
  {{ return(api.Relation.create(database=relation.database, schema=relation.schema,
                                identifier=topic.backing_table, type='table')) }}
{%- endmacro %}


{#-- Columns of the backing table after _offset, in stored order. --#}
{% macro topic_stored_columns(topic) -%}
  {%- set names = ['_row_idx', '_produced_at'] -%}
  {%- for column in topic.columns -%}{%- do names.append(column[0]) -%}{%- endfor -%}
  {%- do names.append('tenant_id') -%}
  {{ return(names) }}
{%- endmacro %}


{% macro get_create_topic_backing_sql(backing, topic) -%}
  {%- set delta = topic.file_format == 'delta' -%}
  create table {{ backing }} (
    _offset bigint{{ ' not null' if delta }},
    _row_idx bigint{{ ' not null' if delta }},
    _produced_at bigint{{ ' not null' if delta }},
    {%- for column in topic.columns %}
    {{ adapter.quote_column(column[0]) }} {{ column[1] }},
    {%- endfor %}
    tenant_id string
  ) using {{ topic.file_format }}
  {%- if not delta %}
  partitioned by (_offset)
  {%- endif %}
  comment {{ adapter.sql_string('dbt-jammi topic ' ~ topic.name ~ ' (offset-ordered event log)') }}
  tblproperties (
    'jammi.topic_id' = {{ adapter.sql_string(topic.topic_id) }},
    'jammi.topic_name' = {{ adapter.sql_string(topic.name) }}
    {%- if delta %},
    'delta.isolationLevel' = 'Serializable',
    'delta.appendOnly' = 'false'
    {%- endif %}
  )
{%- endmacro %}


{% macro get_create_topic_view_sql(relation, backing, topic) -%}
  create or replace view {{ relation }}
  comment {{ adapter.sql_string('dbt-jammi topic ' ~ topic.name ~ ' over ' ~ topic.backing_table) }}
  as select _offset, _row_idx, _produced_at,
    {%- for column in topic.columns %} {{ adapter.quote_column(column[0]) }},{% endfor %} tenant_id
  from {{ backing }}
{%- endmacro %}


{% macro get_insert_topic_registration_sql(registry, topic, relation) -%}
  insert into {{ registry }} values (
    {{ adapter.sql_string(topic.topic_id) }},
    {{ adapter.sql_string(topic.name) }},
    {{ adapter.sql_string(topic.backing_table) }},
    {{ adapter.sql_string(relation.identifier) }},
    {{ adapter.sql_string(tojson(topic.columns)) }},
    {{ adapter.sql_string(topic.file_format) }},
    {{ topic.retention_offsets if topic.retention_offsets is not none else 'null' }},
    {{ topic.retention_ms if topic.retention_ms is not none else 'null' }},
    {{ adapter.topic_now_micros() }}
  )
{%- endmacro %}


{#-- Find the model's topic or create it. The registry row is written last: a run that
     fails earlier leaves at most an unregistered backing table, which no reader uses. --#}
{% macro apply_topic_registration(relation, definition) -%}
  {%- set registry = topic_registry_relation(relation) -%}
  {% do run_query(get_create_topic_registry_sql(registry)) %}
  {%- set topic = fetch_topic_registration(relation) -%}
  {%- if topic is none -%}
    {%- set owner = fetch_topic_name_owner(registry, definition.name) -%}
    {%- if owner is not none -%}
      {% do exceptions.raise_compiler_error(
          "topic '" ~ model.name ~ "': topic_name '" ~ definition.name ~ "' is already used by model '"
          ~ owner ~ "' in schema " ~ relation.schema ~ "\n  Fix: set a different topic_name") %}
    {%- endif -%}
    {%- set topic = {
        'topic_id': definition.topic_id, 'name': definition.name,
        'backing_table': definition.backing_table, 'columns': definition.columns,
        'file_format': adapter.resolve_file_format(config.get('file_format'), model.name),
        'retention_offsets': definition.retention_offsets,
        'retention_ms': definition.retention_ms} -%}
    {%- set backing = topic_backing_relation(relation, topic) -%}
    {% do run_query(get_create_topic_backing_sql(backing, topic)) %}
    {% do run_query(get_insert_topic_registration_sql(registry, topic, relation)) %}
  {%- else -%}
    {% do topic_check_unchanged(topic, definition) %}
  {%- endif -%}
  {%- set old_relation = adapter.get_relation(relation.database, relation.schema, relation.identifier) -%}
  {%- if old_relation is not none and old_relation.type != 'view' -%}
    {% do adapter.drop_relation(old_relation) %}
  {%- endif -%}
  {% do run_query(get_create_topic_view_sql(relation, topic_backing_relation(relation, topic), topic)) %}
  {{ return(topic) }}
{%- endmacro %}


{% macro topic_check_unchanged(topic, definition) -%}
  {%- if topic.name != definition.name -%}
    {% do exceptions.raise_compiler_error(
        "topic '" ~ model.name ~ "': topic_name is '" ~ definition.name ~ "' but this model's topic is registered as '"
        ~ topic.name ~ "'\n  Fix: topic names are permanent; restore topic_name: " ~ topic.name) %}
  {%- endif -%}
  {%- if tojson(topic.columns) != tojson(definition.columns) -%}
    {% do exceptions.raise_compiler_error(
        "topic '" ~ model.name ~ "': the model's columns " ~ tojson(definition.columns)
        ~ " differ from the topic's registered schema " ~ tojson(topic.columns)
        ~ "\n  Fix: keep the published schema, or publish to a new topic_name") %}
  {%- endif -%}
{%- endmacro %}


{#-- The model's output columns as (name, type) rows, without running the query. --#}
{% macro fetch_topic_output_columns(sql) -%}
  {%- set rows = run_query("describe query " ~ sql) -%}
  {%- set columns = [] -%}
  {%- for row in rows -%}{%- do columns.append([row[0], row[1]]) -%}{%- endfor -%}
  {{ return(columns) }}
{%- endmacro %}


{#-- Asked of the metastore, not dbt's relation cache: registry tables are created and
     written by other runs and models within this one. --#}
{% macro topic_table_exists(relation) -%}
  {%- set rows = run_query("show tables in " ~ relation.schema ~ " like "
                           ~ adapter.sql_string(relation.identifier)) -%}
  {{ return(rows | length > 0) }}
{%- endmacro %}


{#-- The Hive metastore's partition-filter parser rejects names that start with '_', so
     a pushed-down `_offset > N` fails. With the fallback on, Spark lists the partitions
     and prunes them itself (same result). Set on the session before topic reads. --#}
{% macro topic_session_setup() -%}
  {%- if execute -%}
    {% do run_query("set spark.sql.hive.metastorePartitionPruningFallbackOnException=true") %}
  {%- endif -%}
{%- endmacro %}
