{#-- The `topics` registry as the read macros find it (topic_events, topic_replay,
     topic_tail). Registering a topic -- the registry, the backing table, the claim of
     its name and the view named after the model -- is one adapter call,
     adapter.topic_register (topic/registration.py says why it is race-free). --#}

{% macro topic_registry_relation(schema_relation) -%}
  {{ return(api.Relation.create(database=schema_relation.database, schema=schema_relation.schema,
                                identifier='topics', type='table')) }}
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


{% macro topic_backing_relation(relation, topic) -%}
  {{ return(api.Relation.create(database=relation.database, schema=relation.schema,
                                identifier=topic.backing_table, type='table')) }}
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
