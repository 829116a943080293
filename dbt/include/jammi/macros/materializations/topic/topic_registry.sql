{#-- The `topics` registry, the backing table and the view named after the model. --#}

{% macro topic_registry_relation(schema_relation) -%}
  {{ return(api.Relation.create(database=schema_relation.database, schema=schema_relation.schema,
                                identifier='topics', type='table')) }}
{%- endmacro %}


{#-- Partitioned by name: registering a topic is attaching its one-row partition, which the
     metastore refuses to do twice (see apply_topic_first_registration). --#}
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
  partitioned by (name)
  comment 'dbt-jammi topics registry: one row per topic; created_at is UTC microseconds'
{%- endmacro %}


{#-- The registry row of the topic a relation (the model's view) stands for, or none:
     asked directly (a missing registry reads as no row) and kept for the invocation
     once found (topic/metadata.py). --#}
{% macro fetch_topic_registration(relation) -%}
  {{ return(adapter.topic_registry_row(topic_registry_relation(relation), 'relation_name', relation.identifier)) }}
{%- endmacro %}


{% macro fetch_topic_registry_row(registry, condition) -%}
  {%- set rows = jammi_engine_query(
      "select topic_id, name, backing_table, schema_json, file_format, relation_name "
      ~ "from " ~ registry ~ " where " ~ condition ~ " order by created_at limit 1") -%}
  {%- if rows | length == 0 -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set row = rows[0] -%}
  {{ return({
      'topic_id': row[0], 'name': row[1], 'backing_table': row[2],
      'columns': fromjson(row[3]), 'file_format': row[4], 'relation_name': row[5]}) }}
{%- endmacro %}


{% macro fetch_topic_name_owner(registry, name) -%}
  {%- set rows = jammi_engine_query("select relation_name from " ~ registry ~ " where name = "
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


{% macro get_topic_view_select_sql(backing, topic) -%}
  select _offset, _row_idx, _produced_at,
    {%- for column in topic.columns %} {{ adapter.quote_column(column[0]) }},{% endfor %} tenant_id
  from {{ backing }}
{%- endmacro %}


{#-- The view carries a fingerprint of what it selects, so a run can tell whether the
     view is already right without re-creating it. --#}
{% macro get_create_topic_view_sql(relation, backing, topic, replace=true) -%}
  {%- set select_sql = get_topic_view_select_sql(backing, topic) -%}
  create {{ 'or replace ' if replace }}view {{ relation }}
  comment {{ adapter.sql_string('dbt-jammi topic ' ~ topic.name ~ ' over ' ~ topic.backing_table) }}
  tblproperties ('jammi.view_fingerprint' = {{ adapter.sql_string(adapter.topic_view_fingerprint(select_sql)) }})
  as {{ select_sql }}
{%- endmacro %}


{#-- Create the view named after the model only when it is missing or wrong: concurrent
     publishes of a registered topic leave it alone. --#}
{% macro apply_topic_view(relation, topic) -%}
  {%- set old_relation = adapter.get_relation(relation.database, relation.schema, relation.identifier) -%}
  {%- if old_relation is not none and old_relation.type != 'view' -%}
    {% do adapter.drop_relation(old_relation) %}
  {%- endif -%}
  {%- set backing = topic_backing_relation(relation, topic) -%}
  {%- set outcome = adapter.topic_apply_view(
      relation,
      get_create_topic_view_sql(relation, backing, topic, replace=false),
      get_create_topic_view_sql(relation, backing, topic, replace=true),
      adapter.topic_view_fingerprint(get_topic_view_select_sql(backing, topic)),
      model.name) -%}
  {%- if outcome != 'kept' -%}
    {{ log("topic " ~ topic.name ~ ": view " ~ relation ~ " " ~ outcome) }}
  {%- endif -%}
{%- endmacro %}


{#-- The registry row without its partition column (name), staged for the claim. --#}
{% macro get_stage_topic_registration_sql(staged_location, topic, relation) -%}
  insert overwrite directory {{ adapter.sql_string(staged_location) }} using parquet
  select
    {{ adapter.sql_string(topic.topic_id) }} as topic_id,
    {{ adapter.sql_string(topic.backing_table) }} as backing_table,
    {{ adapter.sql_string(relation.identifier) }} as relation_name,
    {{ adapter.sql_string(tojson(topic.columns)) }} as schema_json,
    {{ adapter.sql_string(topic.file_format) }} as file_format,
    cast({{ topic.retention_offsets if topic.retention_offsets is not none else 'null' }} as bigint) as retention_offsets,
    cast({{ topic.retention_ms if topic.retention_ms is not none else 'null' }} as bigint) as retention_ms,
    cast(unix_micros(current_timestamp()) as bigint) as created_at
{%- endmacro %}


{#-- Find the model's topic or register it; then make sure the view is right. The
     registry is created only when no row is found (it may not exist yet). --#}
{% macro apply_topic_registration(relation, definition) -%}
  {%- set registry = topic_registry_relation(relation) -%}
  {%- set topic = adapter.topic_registry_row(registry, 'relation_name', relation.identifier) -%}
  {%- if topic is none -%}
    {% do adapter.topic_create_if_absent(get_create_topic_registry_sql(registry)) %}
    {%- set topic = apply_topic_first_registration(relation, registry, definition) -%}
  {%- endif -%}
  {% do topic_check_unchanged(topic, definition) %}
  {% do apply_topic_view(relation, topic) %}
  {{ return(topic) }}
{%- endmacro %}


{#-- First publish: race-free, one backing table per topic name whatever the timing.
     1. create this run's own backing table (a fresh uuid: nobody else uses the name);
     2. stage the registry row in a fresh directory under the registry's `_staging/`;
     3. claim: attach it as partition (name=...) -- the metastore admits one per name.
     The winner's topic is registered, with its backing table already there. A loser
     drops its own (empty, never registered) backing table and adopts the winner's
     registration, so it publishes into the winner's table. A run killed before the
     claim leaves an unregistered empty table and a staged row no reader sees.
     `file_format`: a changelog topic takes its table's (default: the model's config);
     stored as delta on Delta, else parquet (topic/registration.py topic_storage_format). --#}
{% macro apply_topic_first_registration(relation, registry, definition, file_format=none) -%}
  {%- set owner = fetch_topic_name_owner(registry, definition.name) -%}
  {%- if owner is not none -%}
    {% do topic_raise_name_taken(definition.name, owner, relation) %}
  {%- endif -%}
  {%- set candidate = {
      'topic_id': definition.topic_id, 'name': definition.name,
      'backing_table': definition.backing_table, 'columns': definition.columns,
      'file_format': adapter.topic_storage_format(file_format or adapter.resolve_file_format(config.get('file_format'), model.name)),
      'retention_offsets': definition.retention_offsets,
      'retention_ms': definition.retention_ms, 'relation_name': relation.identifier} -%}
  {%- set backing = topic_backing_relation(relation, candidate) -%}
  {% do run_query(get_create_topic_backing_sql(backing, candidate)) %}
  {%- set staged = adapter.topic_staging_location(registry) -%}
  {% do run_query(get_stage_topic_registration_sql(staged, candidate, relation)) %}
  {%- set winner = adapter.topic_claim_registration(registry, candidate, backing, staged, model.name) -%}
  {%- if winner.topic_id == candidate.topic_id -%}
    {{ return(candidate) }}
  {%- endif -%}
  {%- if winner.relation_name != relation.identifier -%}
    {% do topic_raise_name_taken(candidate.name, winner.relation_name, relation) %}
  {%- endif -%}
  {{ log("topic " ~ candidate.name ~ ": registered concurrently by another run; publishing to "
         ~ winner.backing_table) }}
  {{ return(winner) }}
{%- endmacro %}


{% macro topic_raise_name_taken(name, owner, relation) -%}
  {% do exceptions.raise_compiler_error(
      "topic '" ~ model.name ~ "': topic_name '" ~ name ~ "' is already used by model '"
      ~ owner ~ "' in schema " ~ relation.schema ~ "\n  Fix: set a different topic_name") %}
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
    {% do jammi_engine_query("set spark.sql.hive.metastorePartitionPruningFallbackOnException=true") %}
  {%- endif -%}
{%- endmacro %}
