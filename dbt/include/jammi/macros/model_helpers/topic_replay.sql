{#-- Replay: plain SQL over a topic's backing table.

     from {{ topic_backing_table(ref('cdc_orders')) }}       -- every stored event
     from {{ topic_range(ref('cdc_orders'), 3, 5) }}         -- offsets 3..5 (inclusive)

     Both keep the engine column names (_offset, _row_idx, _produced_at) and, in a run
     bound to a tenant, show only that tenant's and shared events (a subquery over the
     backing table, in the one shape the tenant read guard accepts).

     In a dbt unit test the fixture given for the topic stands for its stored rows
     (_offset, _row_idx, _produced_at, the topic's columns, tenant_id); nothing is read
     from the registry. --#}
{% macro topic_backing_table(topic) -%}
  {%- if not execute -%}
    {{ return(topic) }}
  {%- endif -%}
  {%- set source = adapter.unit_test_fixture(model, topic, 'rows') -%}
  {%- if source is none -%}
    {%- set source = topic_backing_relation(topic, adapter.topic_registration(topic, model.name)) -%}
  {%- endif -%}
  {%- set tenant = jammi_bound_tenant() -%}
  {{ return(source if tenant is none else adapter.tenant_scoped_sql(source, tenant)) }}
{%- endmacro %}


{% macro topic_range(topic, from_offset=none, to_offset=none) -%}
  {%- set filters = [] -%}
  {%- if from_offset is not none -%}{%- do filters.append('_offset >= ' ~ (from_offset | int)) -%}{%- endif -%}
  {%- if to_offset is not none -%}{%- do filters.append('_offset <= ' ~ (to_offset | int)) -%}{%- endif -%}
  (select * from {{ topic_backing_table(topic) }}{% if filters %} where {{ filters | join(' and ') }}{% endif %})
{%- endmacro %}
