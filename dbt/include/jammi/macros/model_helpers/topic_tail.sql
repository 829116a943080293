{#-- The live tail's reads (python -m dbt.adapters.jammi.topic.tail, docs/tail.md): a topic
     named by its registered name in `schema`'s `topics` registry, read in the run's
     tenant scope, up to the topic's high-water mark (offsets at or below it are
     complete). Rendered inside `dbt show --inline`. --#}

{% macro jammi_tail_registration(topic_name, schema=none) -%}
  {% do topic_session_setup() %}
  {%- set schema_relation = api.Relation.create(schema=schema or target.schema, identifier='topics') -%}
  {%- set registry = topic_registry_relation(schema_relation) -%}
  {%- set found = fetch_topic_registry_row(registry, "name = " ~ adapter.sql_string(topic_name)) if topic_table_exists(registry) else none -%}
  {%- if found is none -%}
    {%- do exceptions.raise_compiler_error("tail: no topic '" ~ topic_name ~ "' in " ~ registry ~ "\n  Fix: name a published topic (topic_name, e.g. cdc.orders) and pass --schema where its `topics` registry lives") -%}
  {%- endif -%}
  {{ return({'registration': found, 'backing': topic_backing_relation(schema_relation, found)}) }}
{%- endmacro %}


{#-- select <high-water mark> as high_water --#}
{% macro jammi_tail_high_water_sql(topic_name, schema=none) -%}
  {%- if not execute -%}{{ return('select 0 as high_water') }}{%- endif -%}
  {%- set topic = jammi_tail_registration(topic_name, schema) -%}
  select {{ adapter.topic_high_water_mark(topic.backing, topic.registration) | int }} as high_water
{%- endmacro %}


{#-- The events after offset `after` up to the high-water mark, in order; `where` was
     validated by the tail (one boolean expression over the topic's columns). --#}
{% macro jammi_tail_events_sql(topic_name, after, where=none, schema=none) -%}
  {%- if not execute -%}{{ return('select 1') }}{%- endif -%}
  {%- set topic = jammi_tail_registration(topic_name, schema) -%}
  {%- set upto = adapter.topic_high_water_mark(topic.backing, topic.registration) | int -%}
  {%- set tenant = adapter.bound_tenant(var('jammi_tenant', none)) -%}
  {%- set source = topic.backing if tenant is none else adapter.tenant_scoped_sql(topic.backing, tenant) -%}
  select * from {{ source }}
  where _offset > {{ after | int }} and _offset <= {{ upto }}
  {%- if where %} and ({{ where }}){% endif %}
  order by _offset, _row_idx
{%- endmacro %}
