{#-- MERGE applier (delta; iceberg where the session supports MERGE INTO): the
     change set is applied with one MERGE INTO per run, generically over the storage key,
     so SCD2 interval closes/splits (updates keyed by (pk, valid_from)) apply unchanged. --#}

{% macro get_merge_change_set_sql(definition, target_relation, change_set_relation) -%}
  {{ return(adapter.dispatch('get_merge_change_set_sql', 'dbt')(definition, target_relation, change_set_relation)) }}
{%- endmacro %}

{% macro default__get_merge_change_set_sql(definition, target_relation, change_set_relation) -%}
  {%- set q = adapter.quote_column -%}
  {%- set non_key = [] -%}
  {%- for c in definition.storage_columns if c[0] not in definition.storage_key -%}
    {%- do non_key.append(c[0]) -%}
  {%- endfor -%}
merge into {{ target_relation }} as t
using {{ change_set_relation }} as s
on {{ mutable_key_match_clause(definition, 't', 's') }}
when matched and s._change = 'delete' then delete
{%- if non_key %}
when matched and s._change = 'update' then update set
  {%- for c in non_key %}
  t.{{ q(c) }} = s.{{ q(c) }}{{ ',' if not loop.last }}
  {%- endfor %}
{%- endif %}
when not matched and s._change = 'insert' then insert (
  {%- for c in definition.storage_columns %}{{ q(c[0]) }}, {% endfor %}tenant_id)
values (
  {%- for c in definition.storage_columns %}s.{{ q(c[0]) }}, {% endfor %}s.tenant_id)
{%- endmacro %}


{#-- One MERGE (adapter.mutable_apply_merge). Returns {committed, counts}: committed
     false when the commit lost to a concurrent run (nothing of this run written; the
     materialization re-plans against the new snapshot), an error naming the model on
     the last attempt; counts what the MERGE reports it changed
     (mutable_table/commit/merge_commit.py). `merge_sql`: a MERGE already rendered
     (merge_batch.sql: a batch-sourced MERGE, no change set), else the change set's.
     `tombstone_insert`, `changes`: on Iceberg, what commits with the MERGE through the
     run's branch (branch_commit.py). --#}
{% macro apply_merge(definition, target_relation, change_set_relation, file_format, fail_at=none, last_attempt=true, merge_sql=none, tombstone_insert=none, changes=0) -%}
  {%- set merge_sql = merge_sql or get_merge_change_set_sql(definition, target_relation, change_set_relation) -%}
  {{ return(adapter.mutable_apply_merge(definition, target_relation, merge_sql, file_format, fail_at, last_attempt, change_set_relation, tombstone_insert, changes)) }}
{%- endmacro %}
