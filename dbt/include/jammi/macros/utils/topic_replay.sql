{#-- Replay: plain SQL over a topic's backing table.

     from {{ topic_backing_table(ref('cdc_orders')) }}       -- every stored event
     from {{ topic_range(ref('cdc_orders'), 3, 5) }}         -- offsets 3..5 (inclusive)

     Both keep the engine column names (_offset, _row_idx, _produced_at) and, in a run
     bound to a tenant, show only that tenant's and shared events. --#}
{% macro topic_backing_table(topic) -%}
  {%- if not execute -%}
    {{ return(topic) }}
  {%- endif -%}
  {% do topic_session_setup() %}
  {{ return(topic_backing_relation(topic, topic_require_registration(topic))) }}
{%- endmacro %}


{% macro topic_range(topic, from_offset=none, to_offset=none) -%}
  {%- set filters = [] -%}
  {%- if from_offset is not none -%}{%- do filters.append('_offset >= ' ~ (from_offset | int)) -%}{%- endif -%}
  {%- if to_offset is not none -%}{%- do filters.append('_offset <= ' ~ (to_offset | int)) -%}{%- endif -%}
  {%- set tenant = adapter.bound_tenant(var('jammi_tenant', none)) -%}
  {%- if tenant is not none -%}
    {%- do filters.append('(tenant_id is null or tenant_id = ' ~ adapter.sql_string(tenant) ~ ')') -%}
  {%- endif -%}
  (select * from {{ topic_backing_table(topic) }}{% if filters %} where {{ filters | join(' and ') }}{% endif %})
{%- endmacro %}
