{#-- The `topics` registry's relations as the topic macros name them. Registering a topic
     -- the registry, the backing table, the claim of its name and the view named after
     the model -- is one adapter call, adapter.topic_register (topic/registration.py says
     why it is race-free); the read macros find a topic's registry row through
     adapter.topic_registration, topic_events_read and topic_tail, which also set the
     session up for topic reads (registry_service.py, read_session). --#}

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
