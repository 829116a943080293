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


{#-- One MERGE. Returns {committed, counts}: committed false when Delta refused the
     commit because a concurrent run committed first (nothing of this run written; the
     materialization re-plans against the new snapshot), an error naming the model on the
     last attempt; counts what the MERGE reports it changed (mutable_table/commit/merge_commit.py). --#}
{#-- `merge_sql`: a MERGE already rendered (merge_batch.sql), else the change set's.
     `records`: appends that must commit with the MERGE (mutable_branch_records): the
     MERGE then commits through the run's own branch (branch_commit.py).
     `iceberg_target`: an Iceberg batch-sourced MERGE's table, whose snapshot holds the
     MERGE's counts (commit/iceberg_merge.py). --#}
{% macro apply_merge(definition, target_relation, change_set_relation, fail_at=none, last_attempt=true, merge_sql=none, records=[], iceberg_target=none) -%}
  {%- if fail_at in ('write', 'before_commit') -%}
    {%- do run_query(mutable_failure_sql(fail_at)) -%}
  {%- endif -%}
  {%- set merge_sql = merge_sql or get_merge_change_set_sql(definition, target_relation, change_set_relation) -%}
  {%- if records -%}
    {{ return(adapter.mutable_commit_merge_on_branch(merge_sql, target_relation, definition.table_id, last_attempt, records)) }}
  {%- endif -%}
  {#-- identity_column: the commit records where its numbering started (identity.sql) --#}
  {%- if iceberg_target is not none -%}
    {{ return(adapter.mutable_commit_merge(merge_sql, definition.table_id, last_attempt, none, iceberg_target)) }}
  {%- endif -%}
  {%- set commit_args = [merge_sql, definition.table_id, last_attempt] -%}
  {%- if definition.get('identity_from') is not none -%}
    {%- do commit_args.append(definition.identity_from) -%}
  {%- endif -%}
  {{ return(adapter.mutable_commit_merge(*commit_args)) }}
{%- endmacro %}
