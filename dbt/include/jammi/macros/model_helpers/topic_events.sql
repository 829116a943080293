{#-- Consuming a topic (docs/topic.md).

     {{ topic_events(ref('cdc_orders'), where="op = 'd'") }} is a subquery over the
     events this model has not consumed yet, with the engine columns renamed to
     event_offset, event_row_idx, event_produced_at (and event_tenant_id).

     The offset range (last consumed, high-water mark] is fixed once, when the model's
     SQL is compiled, and kept by the adapter. The model's post-hook
     topic_commit_consumed() -- added automatically -- records the high-water mark in
     `topic_consumers` only after the model's own statements succeeded. A run that fails
     records nothing, so the next run reads the same events again (plus newer ones);
     events published while the model runs are above the bound and read next time.

     In a dbt unit test the fixture given for the topic stands for the events (the
     topic's columns, event_offset, event_row_idx, event_produced_at, event_tenant_id):
     the tenant scope and `where` apply to it, and nothing is read from the registry or
     recorded in topic_consumers (docs/topic.md, "Unit tests"). --#}
{% macro topic_events(topic, where=none) -%}
  {#-- the predicate checked; what is read (impl.py): when dbt parses, whether the model
       records what it consumed (not in a unit test); when it runs, the range (the
       session set up for topic reads first) or the unit test's fixture --#}
  {%- set read = adapter.topic_events_read(topic, model, where, var('jammi_tenant', none), execute) -%}
  {%- if read.post_hook -%}
    {%- do config(post_hook=["{{ topic_commit_consumed() }}"]) -%}
  {%- endif -%}
  ({{ read.sql }})
{%- endmacro %}


{#-- Post-hook of every consumer model: record what its compiled SQL read, and report
     it in the node's adapter_response (events_read, offsets_read): topic/consumers.py. --#}
{% macro topic_commit_consumed() -%}
  {%- if execute -%}
    {%- set own = load_result('main') -%}
    {%- set response = adapter.topic_commit_consumed(model.unique_id, own.response if own else none) -%}
    {%- if response is not none -%}
      {%- do store_result('main', response=response) -%}
    {%- endif -%}
  {%- endif -%}
{%- endmacro %}
