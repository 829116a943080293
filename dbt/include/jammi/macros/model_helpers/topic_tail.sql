{#-- The live tail's reads (python -m dbt.adapters.jammi.topic.tail, docs/tail.md): a topic
     named by its registered name in `schema`'s `topics` registry, read in the run's
     tenant scope, up to the topic's high-water mark (offsets at or below it are
     complete). Rendered inside `dbt show --inline`; adapter.topic_tail (impl.py) finds
     the topic, or fails naming the fix. --#}

{#-- select <high-water mark> as high_water --#}
{% macro jammi_tail_high_water_sql(topic_name, schema=none) -%}
  {%- if not execute -%}{{ return('select 0 as high_water') }}{%- endif -%}
  {%- set topic = adapter.topic_tail(schema or target.schema, topic_name, var('jammi_tenant', none)) -%}
  select {{ topic.high_water }} as high_water
{%- endmacro %}


{#-- The events after offset `after` up to the high-water mark, in order; `where` was
     validated by the tail (one boolean expression over the topic's columns). --#}
{% macro jammi_tail_events_sql(topic_name, after, where=none, schema=none) -%}
  {%- if not execute -%}{{ return('select 1') }}{%- endif -%}
  {%- set topic = adapter.topic_tail(schema or target.schema, topic_name, var('jammi_tenant', none)) -%}
  select * from {{ topic.source }}
  where _offset > {{ after | int }} and _offset <= {{ topic.high_water }}
  {%- if where %} and ({{ where }}){% endif %}
  order by _offset, _row_idx
{%- endmacro %}
