{#-- MERGE applier (delta; iceberg where the session supports MERGE INTO): the
     change set is applied with one MERGE INTO per run, generically over the storage key,
     so SCD2 interval closes/splits (updates keyed by (pk, valid_from)) apply unchanged.
     The materialization commits it with adapter.mutable_commit('merge', ...): the test
     hook, Iceberg's counted or branch commit, Delta's identity tag; committed false when
     the commit lost to a concurrent run (nothing of this run written; the run re-plans
     against the new snapshot), an error naming the model on the last attempt
     (mutable_table/commit/merge_commit.py). --#}

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
