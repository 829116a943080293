{#-- The `topic` materialization (docs/topic.md): every run publishes the model's output
     as one batch under the next offset of an append-only, replayable log.

     Phases: setup -> register (backing table, registry claim, view named after the model)
     -> stage the batch where readers cannot see it, and count it -> retention -> post-hooks
     (they can still veto the publish) -> commit (claim the offset; the only step readers
     see). An empty batch claims no offset and retention leaves the topic alone. --#}
{% materialization topic, adapter='jammi', supported_languages=['sql', 'python'] %}

  {#-- setup: validate the definition before any SQL changes state; a Python model's
       program runs first and its DataFrame is the batch (python_models.sql) --#}
  {%- set sql = jammi_python_model_batch() or sql -%}
  {%- set target_relation = this.incorporate(type='view') -%}
  {%- set tenant = adapter.bound_tenant(var('jammi_tenant', none)) -%}
  {%- set sql = jammi_tenant_scoped_sql(sql) -%}
  {%- set output_columns = fetch_topic_output_columns(sql) -%}
  {%- set definition = adapter.topic_definition(model.name, output_columns, config.model.config) -%}

  {{ run_hooks(pre_hooks) }}
  {%- do adapter.tenant_guard_trust(true) -%}

  {#-- register: find this model's topic, or claim its name (backing table, then registry partition);
       create the view only when it is missing or wrong --#}
  {%- set topic = adapter.topic_register(target_relation, definition, model.name, config.get('file_format')) -%}
  {%- set backing = topic_backing_relation(target_relation, topic) -%}

  {#-- stage: write the batch to a fresh location that no reader can see yet, numbered
       as the batch's size and the session allow (topic_service.py) --#}
  {%- set staging = adapter.topic_prepare_staging(backing, topic, sql, definition) -%}
  {% call statement('main') -%}
    {{ get_stage_topic_batch_sql(staging, topic, sql, tenant, staging.row_index) }}
  {%- endcall %}
  {#-- an empty batch is no publish: retention and the commit leave the topic as it is --#}
  {%- set staged_rows = adapter.topic_staged_rows(staging) -%}

  {#-- retention: drop expired offsets that every registered consumer has consumed --#}
  {% do adapter.topic_apply_retention(backing, topic, definition, staged_rows) %}

  {%- do adapter.tenant_guard_trust(false) -%}
  {{ run_hooks(post_hooks) }}
  {%- do adapter.tenant_guard_trust(true) -%}

  {#-- commit: claim the next offset for the staged batch, atomically and once --#}
  {#-- run_results.json: the events published and their offset, none for an empty batch
       (and what the model consumed, which its post-hook reported) --#}
  {%- set consumed = load_result('main') -%}
  {%- set published = adapter.topic_publish(backing, topic, staging, staged_rows, consumed.response if consumed else none) -%}
  {{ log("topic " ~ topic.name ~ ": " ~ published.summary) }}
  {%- do store_result('main', response=published.response) -%}

  {% do persist_docs(target_relation, model) %}
  {%- do adapter.tenant_guard_trust(false) -%}

  {{ return({'relations': [target_relation]}) }}

{% endmaterialization %}
