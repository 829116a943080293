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
  {%- if where is not none -%}
    {%- set where = adapter.validate_predicate(where, 'where', "topic_events in model '" ~ model.name ~ "'") -%}
  {%- endif -%}
  {%- if adapter.is_unit_test(model) -%}
    {%- if not execute -%}
    (select * from {{ topic }})
    {%- else -%}
    ({{ adapter.unit_test_events_sql(adapter.unit_test_fixture(model, topic, 'events'), jammi_bound_tenant(), where) }})
    {%- endif -%}
  {%- elif not execute -%}
    {%- do config(post_hook=["{{ topic_commit_consumed() }}"]) -%}
    (select * from {{ topic }})
  {%- else -%}
    {% do topic_session_setup() %}
    {%- set registration = topic_require_registration(topic) -%}
    {%- set backing = topic_backing_relation(topic, registration) -%}
    {%- set tenant = adapter.bound_tenant(var('jammi_tenant', none)) -%}
    {%- set after = fetch_topic_consumed_offset(topic, registration.topic_id, model.unique_id, tenant) -%}
    {%- set upto = fetch_topic_high_water_mark(backing, registration) -%}
    {%- do adapter.topic_remember_consumed(model.unique_id, topic.schema, registration.topic_id,
                                           after, upto, tenant, backing,
                                           topic.schema ~ '.' ~ topic.identifier) -%}
    {%- set names = [] -%}
    {%- for column in registration.columns -%}{%- do names.append(column[0]) -%}{%- endfor -%}
    ({{ adapter.topic_events_sql(backing, names, after, upto, tenant, where) }})
  {%- endif -%}
{%- endmacro %}


{% macro topic_consumers_relation(relation) -%}
  {{ return(api.Relation.create(database=relation.database, schema=relation.schema,
                                identifier='topic_consumers', type='table')) }}
{%- endmacro %}


{% macro get_create_topic_consumers_sql(consumers) -%}
  create table if not exists {{ consumers }} (
    consumer string,
    tenant_id string,
    topic_id string,
    last_offset bigint,
    committed_at bigint
  ) using parquet
  comment 'dbt-jammi topic consumers: append-only; a consumer position is max(last_offset)'
{%- endmacro %}


{% macro topic_require_registration(topic) -%}
  {%- set registration = fetch_topic_registration(topic) -%}
  {%- if registration is none -%}
    {% do exceptions.raise_compiler_error(
        "model '" ~ model.name ~ "': " ~ topic ~ " is not a topic (no row in "
        ~ topic.schema ~ ".topics)\n  Fix: pass ref() of a model with materialized='topic', and build it first") %}
  {%- endif -%}
  {{ return(registration) }}
{%- endmacro %}


{#-- The last offset `consumer` has recorded as consumed from a topic (0: none). A
     consumer keeps one position per tenant it runs bound to (NULL: unbound). --#}
{% macro fetch_topic_consumed_offset(topic, topic_id, consumer, tenant) -%}
  {#-- asked directly: a missing positions table reads as 0 (no separate existence check) --#}
  {{ return(adapter.topic_consumed_offset(topic_consumers_relation(topic), topic_id, consumer, tenant)) }}
{%- endmacro %}


{#-- The newest committed offset of a topic (0: none). --#}
{% macro fetch_topic_high_water_mark(backing, registration) -%}
  {%- if registration.file_format == 'delta' -%}
    {%- set rows = jammi_engine_query("select coalesce(max(_offset), 0) from " ~ backing) -%}
    {{ return(rows[0][0] | int) }}
  {%- endif -%}
  {%- set offsets = adapter.topic_offsets_from_partitions(run_query("show partitions " ~ backing)) -%}
  {{ return(offsets[-1] if offsets else 0) }}
{%- endmacro %}


{#-- Post-hook of every consumer model: record what its compiled SQL read, and report
     it in the node's adapter_response (events_read, offsets_read). --#}
{% macro topic_commit_consumed() -%}
  {%- if execute -%}
    {%- set reads = {} -%}
    {%- for consumed in adapter.topic_take_consumed(model.unique_id) if consumed.upto > consumed.after -%}
      {%- set counted = jammi_engine_query("select count(*) from ("
          ~ adapter.topic_events_sql(consumed.backing, [], consumed.after, consumed.upto, consumed.tenant, none) ~ ")") -%}
      {%- do reads.update({consumed.name: [consumed.after, consumed.upto, counted[0][0] | int]}) -%}
      {%- set consumers = api.Relation.create(schema=consumed.topic_schema, identifier='topic_consumers', type='table') -%}
      {%- if not adapter.topic_table_known(consumers) -%}
        {% do jammi_engine_query(get_create_topic_consumers_sql(consumers)) %}
        {% do adapter.topic_remember_table(consumers) %}
      {%- endif -%}
      {% do jammi_engine_query("insert into " ~ consumers ~ " values ("
          ~ adapter.sql_string(model.unique_id) ~ ", "
          ~ (adapter.sql_string(consumed.tenant) if consumed.tenant is not none else "null") ~ ", "
          ~ adapter.sql_string(consumed.topic_id) ~ ", "
          ~ consumed.upto ~ ", " ~ adapter.topic_now_micros() ~ ")") %}
    {%- endfor -%}
    {%- if reads -%}
      {%- set own = load_result('main') -%}
      {%- do store_result('main', response=adapter.topic_consumer_response(own.response if own else none, reads)) -%}
    {%- endif -%}
  {%- endif -%}
{%- endmacro %}
